// bubblewrap's version, kept between starts. The runtime asks `bwrap --version` at every set-up (a
// process it waits for) only to warn about a bubblewrap older than 0.5.0; the bundle asks tau
// first (build.ts, BWRAP_VERSION_HOOK). The answer is kept in the state root beside the program's
// identity (device, inode, size, times): a program replaced or updated is asked again. It decides
// that warning and nothing else, so a kept answer can never weaken the sandbox.
import { lstatSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { BWRAP_VERSION_HOOK } from "./bridge-id.js";

/** The file that keeps the answers, in the state root. */
export function bwrapVersionFile(stateRoot: string): string {
  return join(stateRoot, "sandbox-probes", "bwrap-version.json");
}

/** What identifies the program at `path` (following links): changes when it is replaced. */
function identity(path: string): string | undefined {
  try {
    const s = statSync(path, { bigint: true });
    return s.isFile() ? `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` : undefined;
  } catch {
    return undefined;
  }
}

interface Kept {
  readonly path: string;
  readonly identity: string;
  readonly version: string;
}

/** Bounded: the file is tau's own, but read as any file on disk. */
const MAX_FILE_BYTES = 4096;

function read(file: string): Kept | undefined {
  try {
    if (lstatSync(file).size > MAX_FILE_BYTES) return undefined;
    const v = JSON.parse(readFileSync(file, "utf8")) as Partial<Kept>;
    return typeof v.path === "string" && typeof v.identity === "string" && typeof v.version === "string" && /^\d+(\.\d+)*$/.test(v.version) ? (v as Kept) : undefined;
  } catch {
    return undefined;
  }
}

/** Offers the runtime the kept version of the bubblewrap it asks about, and keeps what it finds. */
export function keepBwrapVersion(stateRoot: string): void {
  const file = bwrapVersionFile(stateRoot);
  const hooks = globalThis as Record<symbol, unknown>;
  hooks[Symbol.for(BWRAP_VERSION_HOOK)] = {
    get(bwrap: string): string | undefined {
      const kept = read(file);
      const id = identity(bwrap);
      return kept !== undefined && id !== undefined && kept.path === bwrap && kept.identity === id ? kept.version : undefined;
    },
    set(bwrap: string, version: string): void {
      const id = identity(bwrap);
      if (id === undefined || !/^\d+(\.\d+)*$/.test(version)) return;
      try {
        mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
        const tmp = `${file}.${process.pid}.tmp`;
        writeFileSync(tmp, JSON.stringify({ path: bwrap, identity: id, version } satisfies Kept), { mode: 0o600 });
        renameSync(tmp, file);
      } catch {
        // Not kept: the next start asks bubblewrap again.
      }
    },
  };
}
