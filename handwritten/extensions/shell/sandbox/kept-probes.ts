// Answers about the machine the sandbox keeps between starts, in the state root's
// `sandbox-probes/` (bwrap-version.ts, enter-probe.ts, kept-wrap.ts): each a small JSON file, read bounded,
// written whole and renamed into place (0600, its folder 0700). Any failure is "nothing kept":
// the caller then asks again.
import { lstatSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Bounded: the file is tau's own, but read as any file on disk. */
const MAX_FILE_BYTES = 8192;

/** The file named `name` among the kept answers of `stateRoot`. */
export function keptProbeFile(stateRoot: string, name: string): string {
  return join(stateRoot, "sandbox-probes", name);
}

/** The kept value in `file`, parsed, or undefined (missing, larger than `maxBytes`, not JSON). */
export function readKept(file: string, maxBytes = MAX_FILE_BYTES): Record<string, unknown> | undefined {
  try {
    if (lstatSync(file).size > maxBytes) return undefined;
    const v = JSON.parse(readFileSync(file, "utf8")) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Keeps `value` in `file`; silently not kept when it cannot be written. */
export function writeKept(file: string, value: Record<string, unknown>): void {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(value), { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // Not kept: the next start asks again.
  }
}

/** What identifies the program at `path` (following links): changes when it is replaced or touched. */
export function programIdentity(path: string): string | undefined {
  try {
    const s = statSync(path, { bigint: true });
    return s.isFile() ? `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}` : undefined;
  } catch {
    return undefined;
  }
}
