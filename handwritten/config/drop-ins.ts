// Drop-ins tau writes for the user (`tau provider add`, `tau mcp add`): one YAML file per entry in
// `<config>/harness.d/`, written whole (0600, a temporary file, fsync, rename) and read back with
// the rest of the configuration; removing one removes its file.
import { closeSync, constants, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { randomHex } from "../startup/random.js";
import { validateHarnessConfig, type HarnessConfig } from "../../generated/index.js";
import { ConfigError, MAX_DROP_INS } from "./load.js";

/** `<config>/harness.d/<file>`. */
export function dropInPath(configRoot: string, file: string): string {
  return join(configRoot, "harness.d", file);
}

/** Writes `layer` (checked against harness.yaml's schema) as drop-in `file`, `header` lines first. */
export async function writeDropIn(configRoot: string, file: string, layer: HarnessConfig, header: string): Promise<string> {
  if (!validateHarnessConfig(layer)) {
    const err = validateHarnessConfig.errors?.[0];
    const key = (err?.instancePath ?? "").split("/").filter(Boolean).join(".") || "(top level)";
    throw new ConfigError(`${key}: ${err?.message ?? "invalid"}`);
  }
  const { stringify } = await import("yaml");
  const text = `${header}${stringify(layer)}`;
  const dir = join(configRoot, "harness.d");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = dropInPath(configRoot, file);
  let existing: string[] = [];
  try {
    existing = readdirSync(dir).filter((n) => /\.ya?ml$/.test(n) && !n.startsWith("."));
  } catch {
    // a fresh folder
  }
  if (!existing.includes(file) && existing.length >= MAX_DROP_INS) {
    throw new ConfigError(`${dir}: already holds ${MAX_DROP_INS} drop-in files, the most tau reads`);
  }
  const tmp = join(dir, `.${file}.${process.pid}.${randomHex(6)}.tmp`);
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    try {
      const bytes = Buffer.from(text, "utf8");
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return path;
}

/** Removes drop-in `file`; false when there was none. */
export function removeDropIn(configRoot: string, file: string): boolean {
  try {
    unlinkSync(dropInPath(configRoot, file));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}
