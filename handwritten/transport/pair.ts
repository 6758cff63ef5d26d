// The daemon's own runtime pair: it publishes `<stem>.sock` (0600) and `<stem>.json`, and removes
// exactly those two names on a handled exit. Nobody else ever unlinks a pair.
import * as fs from "node:fs";
import { formatStem, instanceFromEnv, pairPaths, writePairMetadata } from "./discovery.js";
import { listenUnix, type UnixServer, type UnixServerOptions } from "./unix.js";

export interface DaemonEndpointOptions extends UnixServerOptions {
  readonly runtimeDir: string;
  /** The launcher-minted instance; defaults to `instanceFromEnv()` (minted locally for direct launches). */
  readonly instance?: string;
  /** Defaults to `process.pid`. */
  readonly pid?: number;
  /** The tau version recorded in the metadata. */
  readonly version: string;
}

export interface DaemonEndpoint {
  readonly stem: string;
  readonly instance: string;
  readonly socketPath: string;
  readonly metadataPath: string;
  readonly server: UnixServer;
  /** Closes the server, then removes this daemon's own pair. Idempotent. */
  shutdown(): Promise<void>;
}

/**
 * Publishes a daemon's pair: listens on `<pid>-<instance>.sock` in the verified runtime directory
 * (0600), then writes the metadata atomically. A stem that already exists is a `ListenError`:
 * the daemon never replaces a path it did not create.
 */
export async function publishDaemonEndpoint(options: DaemonEndpointOptions): Promise<DaemonEndpoint> {
  const instance = options.instance ?? instanceFromEnv();
  const pid = options.pid ?? process.pid;
  const stem = formatStem(pid, instance);
  const paths = pairPaths(options.runtimeDir, stem);
  const server = await listenUnix(paths.socket, options);
  try {
    writePairMetadata(options.runtimeDir, { pid, instance, created_at: new Date().toISOString(), version: options.version });
  } catch (err) {
    await server.close();
    removeOwnPair(options.runtimeDir, stem);
    throw err;
  }
  let done: Promise<void> | undefined;
  return {
    stem,
    instance,
    socketPath: paths.socket,
    metadataPath: paths.metadata,
    server,
    shutdown(): Promise<void> {
      done ??= server.close().finally(() => removeOwnPair(options.runtimeDir, stem));
      return done;
    },
  };
}

/**
 * Removes the daemon's own `<stem>.sock` and `<stem>.json` (a missing one is fine). Call it only
 * with the stem this process published; it is synchronous so it can run in an `exit` handler.
 */
export function removeOwnPair(runtimeDir: string, stem: string): void {
  const paths = pairPaths(runtimeDir, stem);
  for (const path of [paths.socket, paths.metadata]) {
    try {
      fs.unlinkSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
}

/** Registers a process `exit` handler that removes this daemon's own pair; returns the unregister function. */
export function removeOwnPairOnExit(runtimeDir: string, stem: string): () => void {
  const handler = () => {
    try {
      removeOwnPair(runtimeDir, stem);
    } catch {
      // Best effort at exit: a pair left behind is only ever probed, never trusted.
    }
  };
  process.on("exit", handler);
  return () => process.off("exit", handler);
}
