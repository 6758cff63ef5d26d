// Folders as tests compare them: what "nothing was written" is checked against.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Every file under `dir` with its bytes (base64) and mtime. */
export function snapshotTree(dir: string): Map<string, { bytes: string; mtimeNs: bigint }> {
  const out = new Map<string, { bytes: string; mtimeNs: bigint }>();
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    out.set(p, { bytes: readFileSync(p).toString("base64"), mtimeNs: statSync(p, { bigint: true }).mtimeNs });
  }
  return out;
}
