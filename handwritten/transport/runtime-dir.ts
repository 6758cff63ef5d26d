// The runtime directory: created 0700, and used only when it is a real directory owned by us with
// exactly mode 0700. Anything else fails closed; tau never chmods or chowns a folder it did not create.
import * as fs from "node:fs";
import { dirname } from "node:path";
import { RuntimeDirError } from "./errors.js";
import { RUNTIME_DIR_MODE } from "./limits.js";

function currentUid(): number | undefined {
  return typeof process.geteuid === "function" ? process.geteuid() : undefined;
}

function octal(mode: number): string {
  return "0" + (mode & 0o777).toString(8).padStart(3, "0");
}

/** Checks an existing directory; throws `RuntimeDirError` unless it is ours and exactly 0700. */
function verify(dir: string, st: fs.Stats): void {
  if (st.isSymbolicLink()) throw new RuntimeDirError("symlink", dir, "is a symbolic link");
  if (!st.isDirectory()) throw new RuntimeDirError("not_directory", dir, "is not a directory");
  const uid = currentUid();
  if (uid !== undefined && st.uid !== uid) {
    throw new RuntimeDirError("wrong_owner", dir, `is owned by uid ${st.uid}, not by this user (uid ${uid})`);
  }
  if ((st.mode & 0o777) !== RUNTIME_DIR_MODE) {
    throw new RuntimeDirError(
      "wrong_mode",
      dir,
      `has mode ${octal(st.mode)}, expected ${octal(RUNTIME_DIR_MODE)}`,
      `fix: chmod 700 ${JSON.stringify(dir)}`,
    );
  }
}

/**
 * Makes sure `dir` exists as this user's 0700 runtime directory. Missing parents are created with
 * the default mode; the directory itself is created 0700 (chmod'ed to 0700 right after creation in
 * case the umask stripped owner bits). An existing directory is only verified, never repaired.
 */
export function ensureRuntimeDir(dir: string): void {
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw new RuntimeDirError("io", dir, `cannot be inspected (${(err as NodeJS.ErrnoException).code})`);
  }
  if (st === undefined) {
    fs.mkdirSync(dirname(dir), { recursive: true });
    let created = false;
    try {
      fs.mkdirSync(dir, { mode: RUNTIME_DIR_MODE });
      created = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new RuntimeDirError("io", dir, `cannot be created (${(err as NodeJS.ErrnoException).code})`);
      }
      // Another process created it concurrently: verify what is there now.
    }
    if (created) fs.chmodSync(dir, RUNTIME_DIR_MODE);
    st = fs.lstatSync(dir);
  }
  verify(dir, st);
}

/**
 * Verifies the runtime directory without creating anything. Returns false when it does not exist
 * (there is nothing to discover); throws `RuntimeDirError` when it exists but is not safe to use.
 */
export function checkRuntimeDir(dir: string): boolean {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw new RuntimeDirError("io", dir, `cannot be inspected (${(err as NodeJS.ErrnoException).code})`);
  }
  verify(dir, st);
  return true;
}
