// File helpers shared by the tools: binary detection, bounded text reads and atomic replacement,
// each where the path lands and under the policy when there is one (landing.ts, types.ts).
import { BINARY_SNIFF_BYTES } from "./limits.js";
import { ToolError, describeFsError } from "./errors.js";
import { opener, type Landed } from "./landing.js";
import type { FileAccess } from "./types.js";

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
  /** Where the file really is (links resolved, as opened). */
  real: string;
}

/**
 * Opens `absolute` for reading where it lands (links followed) and refuses it when the policy
 * denies reading it, as named or as landed; the caller closes the handle. Messages name `shown`.
 */
export async function openForRead(absolute: string, shown: string, verb: string, access: FileAccess | undefined): Promise<Landed> {
  const refuse = (path: string): void => {
    const why = access?.readRefusal(path);
    if (why !== undefined) throw new ToolError("failed", `Cannot ${verb} ${shown}: ${why}`);
  };
  // Named in a denied region: refused before it is even opened (its existence is not told either).
  refuse(absolute);
  const landed = await opener()
    .openFile(absolute)
    .catch((error: unknown) => {
      throw new ToolError("failed", `Cannot ${verb} ${shown}: ${describeFsError(error)}.`);
    });
  try {
    refuse(landed.real);
  } catch (error) {
    await landed.handle.close();
    throw error;
  }
  return landed;
}

/**
 * Reads a whole text file of at most `maxBytes` bytes, refusing directories, binary files, larger
 * files and what the policy denies, with messages that name `shown` (the path as the model gave it).
 */
export async function readTextFile(absolute: string, shown: string, maxBytes: number, verb = "read", access?: FileAccess): Promise<TextFile> {
  const { handle, real } = await openForRead(absolute, shown, verb, access);
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw new ToolError("failed", `Cannot ${verb} ${shown}: it is a directory.`);
    if (!info.isFile()) throw new ToolError("failed", `Cannot ${verb} ${shown}: it is not a regular file.`);
    if (info.size > maxBytes) {
      throw new ToolError("failed", `Cannot ${verb} ${shown}: it is ${info.size} bytes, more than the ${maxBytes}-byte limit.`);
    }
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
    return { text: bytes.toString("utf8"), mode: info.mode & 0o7777, real };
  } finally {
    await handle.close();
  }
}

export interface AtomicWriteOutcome {
  /** The file existed before (its mode was kept). */
  existed: boolean;
  /** Where the file was written (a symbolic link's target, no link in it). */
  target: string;
}

/**
 * Replaces `absolute` with `content` atomically where it lands (landing.ts): a symbolic link is
 * followed so the link stays a link, missing parent folders are created, and the policy (when
 * there is one) judges the real path before anything is created.
 */
export async function writeFileAtomic(
  absolute: string,
  shown: string,
  content: string,
  o: { access?: FileAccess; signal?: AbortSignal } = {},
): Promise<AtomicWriteOutcome> {
  const open = opener();
  const spot = await open.findWriteSpot(absolute, shown);
  try {
    if (o.access !== undefined) await o.access.checkWrite({ real: spot.real, requested: absolute, content, signal: o.signal ?? new AbortController().signal });
  } catch (error) {
    await spot.folder.handle.close();
    throw error;
  }
  await open.replace(spot, content, shown);
  return { existed: spot.mode !== undefined, target: spot.real };
}
