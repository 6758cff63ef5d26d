// File helpers shared by the tools: binary detection, bounded text reads and atomic replacement.
import { mkdir, open, realpath, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { BINARY_SNIFF_BYTES } from "./limits.js";
import { ToolError, describeFsError, errnoCode } from "./errors.js";

/** A file is binary when its first `BINARY_SNIFF_BYTES` bytes hold a NUL byte. */
export function looksBinary(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, BINARY_SNIFF_BYTES);
  for (let i = 0; i < end; i++) if (bytes[i] === 0) return true;
  return false;
}

export interface TextFile {
  text: string;
  /** Permission bits of the file. */
  mode: number;
}

/**
 * Reads a whole text file of at most `maxBytes` bytes, refusing directories, binary files and
 * larger files with messages that name `shown` (the path as the model gave it).
 */
export async function readTextFile(absolute: string, shown: string, maxBytes: number, verb = "read"): Promise<TextFile> {
  let info;
  try {
    info = await stat(absolute);
  } catch (error) {
    throw new ToolError("failed", `Cannot ${verb} ${shown}: ${describeFsError(error)}.`);
  }
  if (info.isDirectory()) throw new ToolError("failed", `Cannot ${verb} ${shown}: it is a directory.`);
  if (!info.isFile()) throw new ToolError("failed", `Cannot ${verb} ${shown}: it is not a regular file.`);
  if (info.size > maxBytes) {
    throw new ToolError("failed", `Cannot ${verb} ${shown}: it is ${info.size} bytes, more than the ${maxBytes}-byte limit.`);
  }
  const handle = await open(absolute, "r").catch((error: unknown) => {
    throw new ToolError("failed", `Cannot ${verb} ${shown}: ${describeFsError(error)}.`);
  });
  try {
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) {
        throw new ToolError("failed", `Cannot ${verb} ${shown}: it grew past the ${maxBytes}-byte limit while being read.`);
      }
    }
    const bytes = buffer.subarray(0, length);
    if (looksBinary(bytes)) throw new ToolError("failed", `Cannot ${verb} ${shown}: it is a binary file.`);
    return { text: bytes.toString("utf8"), mode: info.mode & 0o7777 };
  } finally {
    await handle.close();
  }
}

export interface AtomicWriteOutcome {
  /** The file existed before (its mode was kept). */
  existed: boolean;
  /** The path actually replaced (a symbolic link's target). */
  target: string;
}

/**
 * Replaces `absolute` with `content` atomically: a temporary file in the same folder, written,
 * flushed, given the existing file's mode, then renamed over it. A symbolic link is followed so the
 * link stays a link. Parent folders are created.
 */
export async function writeFileAtomic(absolute: string, shown: string, content: string): Promise<AtomicWriteOutcome> {
  let target = absolute;
  let mode: number | undefined;
  try {
    target = await realpath(absolute);
    const info = await stat(target);
    if (info.isDirectory()) throw new ToolError("failed", `Cannot write ${shown}: it is a directory.`);
    if (!info.isFile()) throw new ToolError("failed", `Cannot write ${shown}: it is not a regular file.`);
    mode = info.mode & 0o7777;
  } catch (error) {
    if (error instanceof ToolError) throw error;
    if (errnoCode(error) !== "ENOENT") throw new ToolError("failed", `Cannot write ${shown}: ${describeFsError(error)}.`);
    target = absolute;
  }
  const folder = dirname(target);
  try {
    await mkdir(folder, { recursive: true });
  } catch (error) {
    throw new ToolError("failed", `Cannot create the folder of ${shown}: ${describeFsError(error)}.`);
  }
  // O_EXCL ("wx") makes the name safe; the random part only avoids a leftover of an earlier process.
  // (Math.random, not node:crypto: loading that would cost every shell extension start ~7 ms.)
  const temporary = join(folder, `.${basename(target)}.tau-${process.pid}-${Math.random().toString(36).slice(2, 12)}.tmp`);
  try {
    const handle = await open(temporary, "wx", 0o666);
    try {
      await handle.writeFile(content, "utf8");
      if (mode !== undefined) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw new ToolError("failed", `Cannot write ${shown}: ${describeFsError(error)}.`);
  }
  return { existed: mode !== undefined, target };
}
