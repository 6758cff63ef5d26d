// Files as tests compare and damage them: what "nothing was written" is checked against, and a
// journal with a broken frame.
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
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

/** The files under `dir` whose text holds `needle` (a secret that must be nowhere). */
export function filesHolding(dir: string, needle: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const p = join(e.parentPath, e.name);
    if (!e.isFile()) continue;
    let text: string;
    try {
      text = readFileSync(p, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue; // a lock's temporary file, gone meanwhile
      throw err;
    }
    if (text.includes(needle)) out.push(p);
  }
  return out;
}

/**
 * Breaks the CBOR of frame `index` of the journal at `path` (its first payload byte becomes a stray
 * "break"): the frames before it stay fine.
 */
export function corruptJournalFrame(path: string, index: number): void {
  const bytes = readFileSync(path);
  const offsets: number[] = [];
  for (let at = 0; at < bytes.length; at += 8 + Number(bytes.readBigUInt64LE(at))) offsets.push(at);
  const corrupt = Buffer.from(bytes);
  corrupt[(offsets[index] ?? 0) + 8] = 0xff;
  writeFileSync(path, corrupt);
}
