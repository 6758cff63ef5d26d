// bubblewrap's version, kept between starts. The runtime asks `bwrap --version` at every set-up (a
// process it waits for) only to warn about a bubblewrap older than 0.5.0; the bundle asks tau
// first (build.ts, BWRAP_VERSION_HOOK). The answer is kept in the state root beside the program's
// identity (device, inode, size, times): a program replaced or updated is asked again. It decides
// that warning and nothing else, so a kept answer can never weaken the sandbox.
import { BWRAP_VERSION_HOOK } from "./runtime-hooks.js";
import { keptProbeFile, programIdentity, readKept, writeKept } from "./kept-probes.js";

/** The file that keeps the answers, in the state root. */
export function bwrapVersionFile(stateRoot: string): string {
  return keptProbeFile(stateRoot, "bwrap-version.json");
}

const VERSION = /^\d+(\.\d+)*$/;

/** Offers the runtime the kept version of the bubblewrap it asks about, and keeps what it finds. */
export function keepBwrapVersion(stateRoot: string): void {
  const file = bwrapVersionFile(stateRoot);
  const hooks = globalThis as Record<symbol, unknown>;
  hooks[Symbol.for(BWRAP_VERSION_HOOK)] = {
    get(bwrap: string): string | undefined {
      const kept = readKept(file);
      const id = programIdentity(bwrap);
      const version = kept?.version;
      return id !== undefined && kept?.path === bwrap && kept.identity === id && typeof version === "string" && VERSION.test(version) ? version : undefined;
    },
    set(bwrap: string, version: string): void {
      const id = programIdentity(bwrap);
      if (id !== undefined && VERSION.test(version)) writeKept(file, { path: bwrap, identity: id, version });
    },
  };
}
