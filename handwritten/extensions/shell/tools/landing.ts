// Where a path lands, found so that a concurrent rename or symbolic-link swap cannot redirect a file
// tool (SPEC-shell-tools, "Where a path lands"). A file or folder is opened first and judged by the
// descriptor: on Linux its path is read back from `/proc/self/fd/N`, and everything done below an
// opened folder goes through `/proc/self/fd/N/NAME` (Node has no openat), with O_NOFOLLOW where a
// name must not be a link. Elsewhere (macOS) the fallback is conservative: the path's real path is
// checked to be the very file the descriptor holds (same device and inode) after it was opened and
// again before a write is put in place.
import { constants, statSync, type Dirent } from "node:fs";
import { lstat, mkdir, open, readdir, readlink, realpath, rename, stat, unlink, type FileHandle } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { ToolError, describeFsError, errnoCode } from "./errors.js";

/** Symbolic links followed while finding where a write lands (as the kernel's own limit). */
export const MAX_LINK_HOPS = 40;

/** An open file or folder and where it really is. */
export interface Landed {
  readonly handle: FileHandle;
  /** Its real path when it was opened (no link in it). */
  readonly real: string;
}

/** Where a file tool's write lands, found before anything is created. */
export interface WriteSpot {
  /** The nearest existing folder of the target, open. */
  readonly folder: Landed;
  /** Folders to create below it, in order. */
  readonly missing: readonly string[];
  /** The file's name in the last of them. */
  readonly name: string;
  /** The real path the file will have. */
  readonly real: string;
  /** Permission bits of the file being replaced; undefined for a new file. */
  readonly mode: number | undefined;
}

/** What a write asks before it changes anything: throws (a ToolError) to refuse. */
export type WriteCheck = (real: string) => Promise<void>;

const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
// A FIFO or a device opened for reading must not block the tool: the open never waits, and what
// is not a regular file is refused after it.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

export class Opener {
  /** `procFd`: resolve through `/proc/self/fd` (Linux); false: the verify-after-open fallback. */
  constructor(readonly procFd: boolean) {}

  /** The path that names `name` inside the open folder, whatever has been renamed since it was opened. */
  at(folder: Landed, name = ""): string {
    const base = this.procFd ? `/proc/self/fd/${folder.handle.fd}` : folder.real;
    return name === "" ? base : `${base}/${name}`;
  }

  /** Where the descriptor's file is now; throws when it is no longer where it was found (fallback) or is gone. */
  async whereNow(landed: Landed): Promise<string> {
    if (this.procFd) return readlink(`/proc/self/fd/${landed.handle.fd}`);
    await this.sameFile(landed.handle, landed.real);
    return landed.real;
  }

  /** Opens `absolute` for reading (links followed wherever they lead); `real` is where it landed. */
  async openFile(absolute: string): Promise<Landed> {
    return this.land(absolute, READ_FLAGS);
  }

  /** Opens the folder `absolute` (links followed); `real` is where it landed. */
  async openFolder(absolute: string): Promise<Landed> {
    return this.land(absolute, constants.O_RDONLY | O_DIRECTORY);
  }

  /** Opens `name` inside an open folder without following it; undefined when it is a link or gone. */
  async openChild(folder: Landed, name: string, kind: "file" | "folder"): Promise<Landed | undefined> {
    const flags = (kind === "folder" ? constants.O_RDONLY | O_DIRECTORY : READ_FLAGS) | O_NOFOLLOW;
    let handle: FileHandle;
    try {
      handle = await open(this.at(folder, name), flags);
    } catch {
      return undefined;
    }
    const landed = { handle, real: join(folder.real, name) };
    try {
      if (this.procFd) return { handle, real: await readlink(`/proc/self/fd/${handle.fd}`) };
      await this.sameFile(handle, landed.real);
      return landed;
    } catch {
      await handle.close();
      return undefined;
    }
  }

  /** The entries of an open folder. */
  async list(folder: Landed): Promise<Dirent[]> {
    return readdir(this.at(folder), { withFileTypes: true });
  }

  private async land(absolute: string, flags: number): Promise<Landed> {
    const handle = await open(absolute, flags);
    try {
      if (this.procFd) return { handle, real: stripDeleted(await readlink(`/proc/self/fd/${handle.fd}`)) };
      const real = await realpath(absolute);
      await this.sameFile(handle, real);
      return { handle, real };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** The fallback's check: `path` names the file the descriptor holds. */
  private async sameFile(handle: FileHandle, path: string): Promise<void> {
    const [held, named] = await Promise.all([handle.stat(), stat(path)]);
    if (held.dev !== named.dev || held.ino !== named.ino) throw Object.assign(new Error("the path changed while it was opened"), { code: "ECHANGED" });
  }

  /**
   * Finds where a write to `absolute` lands: a link to a file is followed (it stays a link), each
   * folder is opened and judged where it is, and what is missing is only named, not created yet.
   */
  async findWriteSpot(absolute: string, shown: string): Promise<WriteSpot> {
    let path = absolute;
    for (let hops = 0; hops <= MAX_LINK_HOPS; hops++) {
      const { folder, missing } = await this.nearestFolder(dirname(path), shown);
      const name = basename(path);
      const spot = (mode: number | undefined): WriteSpot => ({ folder, missing, name, real: join(folder.real, ...missing, name), mode });
      if (missing.length > 0) return spot(undefined);
      let info;
      try {
        info = await lstat(this.at(folder, name));
      } catch (error) {
        if (errnoCode(error) === "ENOENT") return spot(undefined);
        await folder.handle.close();
        throw new ToolError("failed", `Cannot write ${shown}: ${describeFsError(error)}.`);
      }
      if (info.isSymbolicLink()) {
        const link = await readlink(this.at(folder, name)).finally(() => folder.handle.close());
        path = resolve(folder.real, link);
        continue;
      }
      if (!info.isFile()) {
        await folder.handle.close();
        throw new ToolError("failed", `Cannot write ${shown}: ${info.isDirectory() ? "it is a directory" : "it is not a regular file"}.`);
      }
      return spot(info.mode & 0o7777);
    }
    throw new ToolError("failed", `Cannot write ${shown}: too many levels of symbolic links.`);
  }

  /** The nearest existing folder at or above `dir`, open, and the names below it that are missing. */
  private async nearestFolder(dir: string, shown: string): Promise<{ folder: Landed; missing: string[] }> {
    const missing: string[] = [];
    for (let at = dir; ; at = dirname(at)) {
      try {
        return { folder: await this.openFolder(at), missing };
      } catch (error) {
        if (errnoCode(error) !== "ENOENT" || dirname(at) === at) throw new ToolError("failed", `Cannot write ${shown}: ${describeFsError(error)}.`);
        missing.unshift(basename(at));
      }
    }
  }

  /**
   * Replaces the file at `spot` with `content` atomically: the missing folders are created one by
   * one inside the opened one (never through a link), a temporary file is created there (O_EXCL,
   * O_NOFOLLOW), written, flushed and given the old file's mode, the folder is checked to be still
   * where it was judged, and the file is renamed into place within that folder. Closes the folder.
   */
  async replace(spot: WriteSpot, content: string, shown: string): Promise<void> {
    const opened: Landed[] = [spot.folder];
    const fail = (error: unknown): ToolError => (error instanceof ToolError ? error : new ToolError("failed", `Cannot write ${shown}: ${describeFsError(error)}.`));
    try {
      await this.expectAt(spot.folder, shown);
      let folder = spot.folder;
      for (const name of spot.missing) {
        await mkdir(this.at(folder, name)).catch((error: unknown) => {
          if (errnoCode(error) !== "EEXIST") throw new ToolError("failed", `Cannot create the folder of ${shown}: ${describeFsError(error)}.`);
        });
        const next = await this.openChild(folder, name, "folder");
        if (next === undefined) throw changed(shown);
        opened.push(next);
        folder = next;
      }
      // O_EXCL makes the name safe; the random part only avoids a leftover of an earlier process.
      // (Math.random, not node:crypto: loading that would cost every shell extension start ~7 ms.)
      const temporary = `.${spot.name}.tau-${process.pid}-${Math.random().toString(36).slice(2, 12)}.tmp`;
      const handle = await open(this.at(folder, temporary), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW, 0o666);
      try {
        try {
          await handle.writeFile(content, "utf8");
          if (spot.mode !== undefined) await handle.chmod(spot.mode);
          await handle.sync();
        } finally {
          await handle.close();
        }
        await this.expectAt(folder, shown);
        await rename(this.at(folder, temporary), this.at(folder, spot.name));
      } catch (error) {
        await unlink(this.at(folder, temporary)).catch(() => undefined);
        throw error;
      }
    } catch (error) {
      throw fail(error);
    } finally {
      for (const o of opened) await o.handle.close().catch(() => undefined);
    }
  }

  /** Throws when the open folder is no longer where it was judged to be (renamed, swapped, removed). */
  private async expectAt(folder: Landed, shown: string): Promise<void> {
    const now = await this.whereNow(folder).catch(() => undefined);
    if (now !== folder.real) throw changed(shown);
  }
}

function changed(shown: string): ToolError {
  return new ToolError("failed", `Cannot write ${shown}: a folder on its path was moved or replaced while it was being written; nothing was written. Try again.`);
}

/** `/proc/self/fd/N` of a file removed since it was opened ends in " (deleted)". */
function stripDeleted(path: string): string {
  return path.endsWith(" (deleted)") ? path.slice(0, -" (deleted)".length) : path;
}

let shared: Opener | undefined;

/** The opener for this platform: `/proc/self/fd` where there is one, the fallback elsewhere. */
export function opener(): Opener {
  if (shared === undefined) {
    let procFd = false;
    try {
      procFd = process.platform === "linux" && statSync("/proc/self/fd").isDirectory();
    } catch {
      // no /proc mounted: the fallback
    }
    shared = new Opener(procFd);
  }
  return shared;
}
