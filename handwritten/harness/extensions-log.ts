// The session's extensions.log: every extension's stderr, line by line under its instance name,
// bounded on disk by rotation (SPEC-extension-host). Best effort: it never fails the daemon.
import { closeSync, fstatSync, openSync, renameSync, writeSync } from "node:fs";
import { EXTENSIONS_LOG_MAX_BYTES } from "../host/index.js";

/**
 * An append-only log file of at most `maxBytes`: a line that would take it past the bound first
 * renames it to `<path>.1` (replacing the previous one) and starts a new file, so the newest lines
 * are kept and a line is never split between the two. Writes are synchronous, so nothing queues in
 * memory however fast an extension writes, and a rename never races a pending write.
 */
export class RotatingLog {
  private fd: number | undefined;
  private size = 0;

  constructor(
    readonly path: string,
    readonly maxBytes: number = EXTENSIONS_LOG_MAX_BYTES,
  ) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) throw new RangeError("maxBytes must be a positive integer");
    this.open();
  }

  /** Appends `lines` (each ending in "\n"); lines that cannot be written are dropped. */
  append(lines: readonly string[]): void {
    let batch = "";
    let batchBytes = 0;
    for (const line of lines) {
      const bytes = Buffer.byteLength(line);
      if (this.size + batchBytes + bytes > this.maxBytes && this.size + batchBytes > 0) {
        this.write(batch);
        batch = "";
        batchBytes = 0;
        this.rotate();
      }
      batch += line;
      batchBytes += bytes;
    }
    this.write(batch);
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  private open(): void {
    try {
      this.fd = openSync(this.path, "a", 0o600);
      // A file left by an earlier daemon of this session counts towards the bound.
      this.size = fstatSync(this.fd).size;
    } catch {
      this.fd = undefined;
    }
  }

  private write(text: string): void {
    if (text === "" || this.fd === undefined) return;
    try {
      const buffer = Buffer.from(text);
      for (let done = 0; done < buffer.length; ) done += writeSync(this.fd, buffer, done);
      this.size += buffer.length;
    } catch {
      // A full disk or a vanished folder loses these lines, nothing else.
    }
  }

  private rotate(): void {
    this.close();
    try {
      renameSync(this.path, `${this.path}.1`);
    } catch (err) {
      // Gone already (removed by hand): a new file starts all the same. Kept in place: writing on
      // would pass the bound, so the log stops.
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") return;
    }
    this.open();
  }
}
