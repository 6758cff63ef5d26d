// Recognising a filesystem denial in a failed command's output (SPEC-sandbox, "Approvals"). The
// output is the command's own, so what it names is a candidate for the user to judge, never proof:
// it can nominate a request, it never grants anything by itself.
import { existsSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, resolve } from "node:path";
import { within, type EffectivePolicy } from "./policy.js";

export interface Denial {
  readonly access: "read" | "write";
  /** The path the output named, absolute. */
  readonly path: string;
  /** What an approval grants: for a write, the nearest existing directory (creating a file needs it writable). */
  readonly grant: string;
  /** The path is protected: no approval can open it. */
  readonly protected: boolean;
}

/** Lines longer than this are not searched (a minified file printed whole is not an error message). */
const MAX_LINE_CHARS = 4096;
/** Only the last lines of the output are searched: the error that ended a command is near its end. */
const MAX_LINES = 200;

const WRITE_ERROR = /Read-only file system|EROFS|\[Errno 30\]/;
/** How a write to a protected path that did not exist shows (its mount point is a read-only file or folder). */
const PROTECTED_ERROR = /Not a directory|File exists|Device or resource busy|ENOTDIR|EEXIST|EBUSY|\[Errno 20\]|\[Errno 17\]/;
const READ_ERROR = /Permission denied|No such file or directory|EACCES|ENOENT|\[Errno 2\]|\[Errno 13\]/;

/**
 * Candidate paths on one line: quoted ones (`touch: cannot touch 'PATH': …`, Python's and Node's
 * messages), then the field right before the error (`bash: line 1: PATH: Read-only file system`).
 */
function candidates(line: string, error: RegExp): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/['‘"`]([^'’"`\n]{1,4096})['’"`]/g)) out.push(m[1] as string);
  const at = line.search(error);
  const fields = line.slice(0, at).split(/:\s+/).map((f) => f.trim()).filter((f) => f !== "");
  const before = fields[fields.length - 1]?.replace(/:$/, "");
  if (before !== undefined && !/\s/.test(before)) out.push(before);
  return out.filter((c) => c.startsWith("/") || c.startsWith(".") || c.startsWith("~") || /^[\w.-]+(\/|$)/.test(c));
}

/** The nearest existing directory at or above `path`. */
function nearestDirectory(path: string): string {
  let dir = path;
  for (;;) {
    try {
      if (statSync(dir).isDirectory()) return dir;
    } catch {
      // not there: look above
    }
    const up = dirname(dir);
    if (up === dir) return dir;
    dir = up;
  }
}

function writable(path: string, policy: EffectivePolicy): boolean {
  return policy.allowWrite.some((root) => within(path, root));
}

function readDenied(path: string, policy: EffectivePolicy): boolean {
  return policy.denyRead.some((root) => within(path, root)) && !policy.allowRead.some((p) => !/[*?[]/.test(p) && within(path, p));
}

/**
 * The first denial the output names that the policy explains: a write error on a path outside the
 * writable set or inside a protected one, or a read error on a read-denied path.
 */
export function findDenial(output: string, cwd: string, policy: EffectivePolicy): Denial | undefined {
  const lines = output.split("\n").slice(-MAX_LINES);
  for (const line of lines) {
    if (line.length > MAX_LINE_CHARS) continue;
    const write = WRITE_ERROR.test(line);
    const read = !write && READ_ERROR.test(line);
    const protectedOnly = !write && !read && PROTECTED_ERROR.test(line);
    if (!write && !read && !protectedOnly) continue;
    for (const c of candidates(line, write ? WRITE_ERROR : read ? READ_ERROR : PROTECTED_ERROR)) {
      const path = resolve(cwd, c.startsWith("~/") ? c.replace("~", homedir()) : c);
      const isProtected = policy.protected.some((p) => within(path, p));
      if (protectedOnly) {
        if (isProtected) return { access: "write", path, grant: path, protected: true };
        continue;
      }
      if (write) {
        if (isProtected) return { access: "write", path, grant: path, protected: true };
        // A write under a writable root that still failed went through a link out of it, or hit a
        // deny-write entry: the grant is where it really lands.
        const target = realTarget(path);
        if (!writable(target, policy) || policy.denyWrite.some((d) => within(target, d)) || target !== path) {
          return { access: "write", path, grant: nearestDirectory(target), protected: false };
        }
      } else if (readDenied(path, policy)) {
        return { access: "read", path, grant: path, protected: false };
      }
    }
  }
  return undefined;
}

/** `path` with its existing part's symbolic links resolved (a link out of the workspace is judged where it leads). */
export function realTarget(path: string): string {
  let existing = path;
  const rest: string[] = [];
  while (!existsSync(existing)) {
    const up = dirname(existing);
    if (up === existing) return path;
    rest.unshift(existing.slice(up.length + (up.endsWith("/") ? 0 : 1)));
    existing = up;
  }
  try {
    return resolve(realpathSync(existing), ...rest);
  } catch {
    return path;
  }
}
