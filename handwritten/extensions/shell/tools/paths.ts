// Path arguments resolve against the call's working directory (SPEC-shell-tools).
import { homedir } from "node:os";
import { isAbsolute, relative, resolve, sep } from "node:path";

/** Resolves a path argument: `~` and `~/…` are the home folder; relative paths use `cwd`. */
export function resolvePath(cwd: string, input: string): string {
  if (input === "~") return homedir();
  if (input.startsWith("~/")) return resolve(homedir(), input.slice(2));
  return resolve(cwd, input);
}

/** A path for output: relative to `cwd` when inside it (`.` for `cwd` itself), absolute otherwise. */
export function displayPath(cwd: string, absolute: string): string {
  const rel = relative(cwd, absolute);
  if (rel === "") return ".";
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return absolute;
  return rel;
}
