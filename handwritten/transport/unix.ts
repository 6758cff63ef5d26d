// Unix socket server and client. The server lives in a verified 0700 runtime directory; its socket
// is bound under umask 0177 (so it is 0600 from the moment it exists) and chmod'ed 0600 after
// listen as well. Every accepted socket becomes a harness-side `Connection`.
import * as fs from "node:fs";
import * as net from "node:net";
import { dirname } from "node:path";
import { Connection, InboundBudget, type ConnectionOptions } from "./connection.js";
import { ConnectError, ListenError, errnoOf } from "./errors.js";
import { CONNECT_TIMEOUT_MS, FRAME_DEADLINE_MS, MAX_INBOUND_PARTIAL_BYTES, MAX_SOCKET_CONNECTIONS, MAX_SOCKET_PATH_BYTES, SOCKET_MODE } from "./limits.js";
import { ensureRuntimeDir } from "./runtime-dir.js";

export type ConnectionTuning = Omit<ConnectionOptions, "side" | "inboundBudget">;

export interface UnixServerOptions {
  /** Called synchronously for every accepted connection, before any message can arrive. */
  readonly onConnection: (connection: Connection) => void;
  readonly connection?: ConnectionTuning;
  readonly maxConnections?: number;
  /** Bytes of partial frames all connections may hold together (default MAX_INBOUND_PARTIAL_BYTES). */
  readonly maxInboundPartialBytes?: number;
}

export interface UnixServer {
  readonly path: string;
  readonly connections: ReadonlySet<Connection>;
  /** Stops accepting, closes every connection (flushing their queues) and waits for the socket to close. */
  close(): Promise<void>;
}

const SOCKET_UMASK = 0o177;

function checkPathLength(path: string): boolean {
  return Buffer.byteLength(path) <= MAX_SOCKET_PATH_BYTES;
}

/** Listens on `socketPath` (its folder is the runtime directory, created or verified 0700). */
export async function listenUnix(socketPath: string, options: UnixServerOptions): Promise<UnixServer> {
  if (!checkPathLength(socketPath)) {
    throw new ListenError(socketPath, "ENAMETOOLONG", `the path is longer than ${MAX_SOCKET_PATH_BYTES} bytes`);
  }
  ensureRuntimeDir(dirname(socketPath));
  const connections = new Set<Connection>();
  const server = net.createServer({ allowHalfOpen: true });
  server.maxConnections = options.maxConnections ?? MAX_SOCKET_CONNECTIONS;
  const inboundBudget = new InboundBudget(options.maxInboundPartialBytes ?? MAX_INBOUND_PARTIAL_BYTES);
  server.on("connection", (socket) => {
    const connection = new Connection(socket, { frameDeadlineMs: FRAME_DEADLINE_MS, ...options.connection, side: "harness", inboundBudget });
    connections.add(connection);
    connection.onClose(() => connections.delete(connection));
    options.onConnection(connection);
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (err: unknown) => {
      server.off("listening", onListening);
      const errno = errnoOf(err);
      reject(new ListenError(socketPath, errno, errno === "EADDRINUSE" ? "the path already exists" : `listen failed (${errno})`));
    };
    const onListening = () => {
      server.off("error", onError);
      resolve();
    };
    server.once("error", onError);
    server.once("listening", onListening);
    // Node binds a pipe synchronously inside listen(), so the restrictive umask covers the bind.
    let previous: number | undefined;
    try {
      previous = process.umask(SOCKET_UMASK);
    } catch {
      previous = undefined;
    }
    try {
      server.listen(socketPath);
    } finally {
      if (previous !== undefined) process.umask(previous);
    }
  });

  try {
    fs.chmodSync(socketPath, SOCKET_MODE);
  } catch (err) {
    server.close();
    throw new ListenError(socketPath, errnoOf(err), "cannot set the socket mode to 0600");
  }

  let closing: Promise<void> | undefined;
  return {
    path: socketPath,
    connections,
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const c of [...connections]) c.close("server closing");
      });
      return closing;
    },
  };
}

export interface ConnectOptions {
  readonly timeoutMs?: number;
  readonly connection?: ConnectionTuning;
}

/** Connects to a unix socket as a peer; rejects with a typed `ConnectError`. */
export function connectUnix(socketPath: string, options: ConnectOptions = {}): Promise<Connection> {
  if (!checkPathLength(socketPath)) return Promise.reject(new ConnectError("path_too_long", socketPath));
  const timeoutMs = options.timeoutMs ?? CONNECT_TIMEOUT_MS;
  return new Promise<Connection>((resolve, reject) => {
    const socket = net.createConnection({ path: socketPath, allowHalfOpen: true });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new ConnectError("timeout", socketPath));
    }, timeoutMs);
    socket.once("error", (err) => {
      clearTimeout(timer);
      socket.destroy();
      const errno = errnoOf(err);
      const failure = errno === "ENOENT" ? "not_found" : errno === "ECONNREFUSED" ? "refused" : "io";
      reject(new ConnectError(failure, socketPath, errno));
    });
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.removeAllListeners("error");
      resolve(new Connection(socket, { ...options.connection, side: "peer" }));
    });
  });
}
