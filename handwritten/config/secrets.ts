// File-backed secrets under the config root (SPEC-configuration): `<config>/secrets/<name>`, the
// folder 0700 and each file 0600. A file is written whole into a fresh 0600 temporary (O_EXCL) and
// renamed into place, so no reader ever sees a partial or wider-mode secret; a file whose mode is
// wider than 0600 is refused with the command that fixes it.
import { chmodSync, closeSync, constants, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { randomHex } from "../startup/random.js";

/** Largest secret read or written. */
export const MAX_SECRET_BYTES = 64 * 1024;

/** Secret names: the configured-instance pattern (they become file names). */
export const SECRET_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

export class SecretError extends Error {
  override name = "SecretError";
}

/** `<root>/secrets`: the config root's (written by `tau provider add`) or, read only, the state root's. */
export function secretsDir(root: string): string {
  return join(root, "secrets");
}

export function secretPath(root: string, name: string): string {
  if (!SECRET_NAME.test(name)) throw new SecretError(`invalid secret name ${JSON.stringify(name.slice(0, 80))}`);
  return join(secretsDir(root), name);
}

/**
 * Resolves every named secret once, at daemon start, into memory: `TAU_SECRET_<NAME>` in the
 * daemon's environment wins, then `<config>/secrets/<name>`, then `<state>/secrets/<name>`. Absent
 * secrets are left out (the supervisor reports them); a file with a wider mode throws SecretError.
 */
export function preloadSecrets(names: Iterable<string>, env: NodeJS.ProcessEnv, roots: { config: string; state?: string }): Map<string, string> {
  const out = new Map<string, string>();
  for (const name of names) {
    if (out.has(name) || !SECRET_NAME.test(name)) continue;
    const fromEnv = env[`TAU_SECRET_${name.toUpperCase().replace(/-/g, "_")}`];
    if (fromEnv !== undefined) continue; // resolved from the environment at configure time
    const value = readSecret(roots.config, name) ?? (roots.state ? readSecret(roots.state, name) : undefined);
    if (value !== undefined) out.set(name, value);
  }
  return out;
}

/** A secret value must fit an HTTP header: no control characters, not empty, bounded. */
export function secretValueProblem(value: string): string | undefined {
  if (value === "") return "the key is empty";
  if (Buffer.byteLength(value) > MAX_SECRET_BYTES) return `the key is larger than ${MAX_SECRET_BYTES} bytes`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return "the key contains control characters";
  return undefined;
}

/** Writes `<config>/secrets/<name>` atomically with mode 0600 (folder 0700); replaces an existing one. */
export function writeSecret(configRoot: string, name: string, value: string): string {
  const problem = secretValueProblem(value);
  if (problem) throw new SecretError(problem);
  const path = secretPath(configRoot, name);
  const dir = secretsDir(configRoot);
  mkdirSync(configRoot, { recursive: true, mode: 0o700 });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new SecretError(`${dir} is not a folder`);
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700); // never leave the folder readable by others
  const tmp = join(dir, `.${name}.${process.pid}.${randomHex(6)}.tmp`);
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
  try {
    const bytes = Buffer.from(value, "utf8");
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return path;
}

/**
 * Reads `<config>/secrets/<name>`: undefined when absent; a SecretError (naming the file and the
 * fix) when it is not a regular file, is readable or writable by group or others, or is too large.
 */
export function readSecret(root: string, name: string): string | undefined {
  const path = secretPath(root, name);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP") throw new SecretError(`${path}: is a symbolic link; secret files must be regular files`);
    throw new SecretError(`${path}: cannot read (${code ?? "error"})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new SecretError(`${path}: not a regular file`);
    if ((st.mode & 0o077) !== 0) {
      throw new SecretError(
        `${path}: mode ${(st.mode & 0o777).toString(8).padStart(4, "0")} lets other users read or change it; run \`chmod 600 ${path}\` (and check who could have read it)`,
      );
    }
    if (st.size > MAX_SECRET_BYTES) throw new SecretError(`${path}: larger than ${MAX_SECRET_BYTES} bytes`);
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return buf.subarray(0, off).toString("utf8").replace(/\r?\n$/, "");
  } finally {
    closeSync(fd);
  }
}

/** Removes a secret file; false when there was none. */
export function removeSecret(configRoot: string, name: string): boolean {
  try {
    unlinkSync(secretPath(configRoot, name));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}
