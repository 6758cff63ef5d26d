// Reusing the runtime's wrap between commands (SPEC-sandbox, "Reusing the wrap"). The runtime
// builds bubblewrap's arguments from the policy and from what is on disk (its scan of the project
// for protected files, which paths exist, where links lead); that costs tens of milliseconds per
// command. The command itself reaches the sandbox in an environment variable, so one wrap serves
// every command for as long as nothing it was built from has changed: the same runtime
// configuration, and the same disk as far as the wrap can depend on it. When in doubt the wrap is
// built again; a stale one could leave a path that appeared since unprotected.
import { builtin } from "../../../startup/builtin.js";
import { lstatSync, mkdirSync, readdirSync, readlinkSync, rmdirSync, unlinkSync, chmodSync } from "node:fs";
import { dirname } from "node:path";
import type { ProjectScan } from "./project-scan.js";

// node:crypto is loaded on the first wrap, not at start-up (a bundle start-up test guards it).
const createHash = (algorithm: string): import("node:crypto").Hash => builtin<typeof import("node:crypto")>("crypto").createHash(algorithm);

/** The environment variable that carries the command into the reusable wrap. */
export const SANDBOX_COMMAND_ENV = "TAU_SANDBOX_COMMAND";
/**
 * What the runtime wraps: the command from the environment, which the bash it runs in no longer
 * exports (`export -n`), so the bash that runs the command (by exec, one process) never has it.
 */
export const WRAPPED_COMMAND = `export -n ${SANDBOX_COMMAND_ENV}; exec bash -c "$${SANDBOX_COMMAND_ENV}"`;

export interface WrapPlan {
  readonly wrapped: string;
  /** What the wrap was built for: the runtime configuration and the disk, hashed. */
  readonly key: string;
  /** The paths `key` covers (diskKey's); undefined when it does not cover every path the wrap names (then it is not reused). */
  readonly keyPaths?: readonly string[];
  /** Kept from an earlier start (kept-wrap.ts): it serves the shared namespace only (its `wrapped` names another start's bridge). */
  readonly sharedOnly?: boolean;
  /** Mount points bubblewrap makes on the host for protected paths missing when the wrap was built. */
  readonly mountPoints: readonly string[];
  /** The runtime's empty folder its read-only mount points bind from, when the wrap uses one. */
  readonly emptyDir: string | undefined;
  /** Every path bubblewrap's arguments name (the runtime's own additions included): part of the next key. */
  readonly paths: readonly string[];
  /** The same wrap for the session's shared network namespace, when it has the shape for it (shared-network.ts). */
  readonly shared: readonly string[] | undefined;
}

function statLine(path: string): string {
  try {
    const s = lstatSync(path, { bigint: true });
    const link = s.isSymbolicLink() ? ` -> ${readlinkSync(path)}` : "";
    return `${path} ${s.mode} ${s.ino} ${s.dev} ${s.uid}${link}`;
  } catch (err) {
    return `${path} ${(err as NodeJS.ErrnoException).code ?? "error"}`;
  }
}

/**
 * The state of the disk a wrap depends on, hashed; undefined when it cannot be told (the project
 * scan was cut short, or a configured entry is a pattern this does not follow). `paths` are every
 * path of the runtime configuration; each is taken with all its ancestors (a folder replaced by a
 * link changes it), and a pattern's folder is listed.
 */
export function diskKey(scan: ProjectScan, paths: readonly string[]): string | undefined {
  if (scan.truncated) return undefined;
  const h = createHash("sha256");
  h.update(scan.listing);
  const done = new Set<string>();
  // The same paths in any order make the same key.
  for (const raw of [...new Set(paths)].sort()) {
    let path = raw;
    if (/[*?[\]{}]/.test(path)) {
      // Only a pattern in the last component (`~/.ssh/*.pub`): its folder's names are what it matches.
      const dir = dirname(path);
      if (/[*?[\]{}]/.test(dir)) return undefined;
      try {
        h.update(`list ${dir}\n${readdirSync(dir).sort().join("\n")}\n`);
      } catch (err) {
        h.update(`list ${dir} ${(err as NodeJS.ErrnoException).code ?? "error"}\n`);
      }
      path = dir;
    }
    for (let p = path; !done.has(p); p = dirname(p)) {
      done.add(p);
      h.update(`${statLine(p)}\n`);
      if (p === "/") break;
    }
  }
  return h.digest("hex");
}

/**
 * The mount points a wrap's bubblewrap makes: the targets of its read-only binds that do not exist
 * now. Undefined when the wrap cannot be reused: its arguments come through a file (`--args`), or
 * a bind's path is quoted (spaces and the like), which this does not read.
 */
export function planMounts(wrapped: string): { mountPoints: string[]; emptyDir: string | undefined; paths: string[] } | undefined {
  const head = wrapped.slice(0, wrapped.indexOf(" -- "));
  if (head.length === 0 || / --args /.test(head)) return undefined;
  const mountPoints: string[] = [];
  let emptyDir: string | undefined;
  for (const m of head.matchAll(/ --ro-bind (\S+) (\S+)/g)) {
    const source = m[1] ?? "";
    const target = m[2] ?? "";
    if (/['"\\$`]/.test(source) || /['"\\$`]/.test(target)) return undefined;
    if (/\/claude-empty-[^/]+$/.test(source)) emptyDir = source;
    if (!exists(target)) mountPoints.push(target);
  }
  // The empty folder is left out: the runtime removes it when idle, and a reuse makes it again.
  const paths = [...new Set(head.split(" ").filter((w) => w.startsWith("/") && w !== emptyDir))];
  return { mountPoints, emptyDir, paths };
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes the runtime's empty folder again where a reused wrap expects it (the runtime removes it
 * when no command runs): only if nothing is there, or it is still this user's private empty folder.
 */
export function ensureEmptyDir(dir: string | undefined): boolean {
  if (dir === undefined) return true;
  try {
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o700);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") return false;
  }
  try {
    const s = lstatSync(dir);
    return s.isDirectory() && s.uid === process.getuid?.() && (s.mode & 0o077) === 0 && readdirSync(dir).length === 0;
  } catch {
    return false;
  }
}

/** Removes the mount points bubblewrap left, as the runtime does: only while still an empty file or folder, deepest first. */
export function removeMountPoints(paths: readonly string[]): void {
  for (const p of [...paths].sort((a, b) => b.length - a.length)) {
    try {
      const s = lstatSync(p);
      if (s.isFile() && s.size === 0) unlinkSync(p);
      else if (s.isDirectory() && readdirSync(p).length === 0) rmdirSync(p);
    } catch {
      // gone already
    }
  }
}
