// Recognising a filesystem denial in a failed command's output (SPEC-sandbox, "Approvals"). The
// output is the command's own, so what it names is a candidate for the user to judge, never proof:
// it can nominate a request, it never grants anything by itself.
import { existsSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, resolve } from "node:path";
import { within, type EffectivePolicy } from "./policy.js";
import { isGitControlPath } from "./project-scan.js";

export interface Denial {
  readonly access: "read" | "write";
  /** The path the output named, absolute. */
  readonly path: string;
  /** What an approval grants: for a write, the nearest existing directory (creating a file needs it writable). */
  readonly grant: string;
  /** The path is protected: no approval can open it. */
  readonly protected: boolean;
  /** The path is inside a git folder whose hooks and config are protected (`git init` there included). */
  readonly gitFolder?: boolean;
  /** The output line that named it (failure evidence for a review; the command controls it). */
  readonly line?: string;
}

/**
 * The git folders whose hooks or config are protected. A write error anywhere inside one is the
 * protection at work: where the folder exists only its hooks and config are read-only, and where it
 * does not yet (`git init`) the whole folder is, since its config cannot be created.
 */
function protectedGitFolders(policy: EffectivePolicy): string[] {
  return [...new Set(policy.protected.filter((p) => /\/\.git\/(hooks|config)$/.test(p)).map((p) => dirname(p)))];
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
    const paths = candidates(line, write ? WRITE_ERROR : read ? READ_ERROR : PROTECTED_ERROR).map((c) => resolve(cwd, c.startsWith("~/") ? c.replace("~", homedir()) : c));
    // A protected path named anywhere on the line is the reason (never offered for approval).
    const guarded = paths.find((path) => policy.protected.some((p) => within(path, p)) || isGitControlPath(path));
    if ((write || protectedOnly) && guarded !== undefined) return { access: "write", path: guarded, grant: guarded, protected: true };
    if (protectedOnly) continue;
    if (write) {
      const inGit = paths.find((path) => protectedGitFolders(policy).some((g) => within(path, g)));
      if (inGit !== undefined) return { access: "write", path: inGit, grant: inGit, protected: true, gitFolder: true };
      // The last path a line names is the one written (`cannot copy 'FROM' to 'TO'`).
      for (const path of [...paths].reverse()) {
        // A write under a writable root that still failed went through a link out of it, or hit a
        // deny-write entry: the grant is where it really lands.
        const target = realTarget(path);
        if (!writable(target, policy) || policy.denyWrite.some((d) => within(target, d)) || target !== path) {
          return { access: "write", path, grant: nearestDirectory(target), protected: false, line };
        }
      }
    } else {
      const denied = paths.find((path) => readDenied(path, policy));
      if (denied !== undefined) return { access: "read", path: denied, grant: denied, protected: false, line };
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
