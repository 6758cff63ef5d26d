// The session's extensions.log stays within its bound by rotation (SPEC-extension-host).
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useTempDirs } from "../../support/temp-dirs.js";
import { RotatingLog } from "../../../handwritten/harness/extensions-log.js";
import { EXTENSIONS_LOG_MAX_BYTES } from "../../../handwritten/host/index.js";

const tempDir = useTempDirs("tau-ext-log-");

function logFile(): string {
  const dir = tempDir();
  return join(dir, "extensions.log");
}

/** A line of exactly `bytes` bytes, "\n" included. */
const line = (bytes: number, fill = "x"): string => `${fill.repeat(bytes - 1)}\n`;
const read = (path: string): string | undefined => (existsSync(path) ? readFileSync(path, "utf8") : undefined);

describe("extensions.log", () => {
  it("[host.extensions-log.rotates-at-bound] is never longer than its bound: the line that would pass it starts a new file and the old one becomes .1", () => {
    expect(EXTENSIONS_LOG_MAX_BYTES).toBe(8 * 1024 * 1024);
    // One below, then exactly at the bound: no rotation.
    const path = logFile();
    const log = new RotatingLog(path, 100);
    log.append([line(60, "a"), line(39, "b")]);
    expect(statSync(path).size).toBe(99);
    log.append([line(1)]);
    expect(statSync(path).size).toBe(100);
    expect(existsSync(`${path}.1`)).toBe(false);
    // One above: the file that reached the bound becomes .1, whole; the new line starts a new file.
    log.append([line(1, "c")]);
    expect(read(`${path}.1`)).toBe(line(60, "a") + line(39, "b") + "\n");
    expect(read(path)).toBe("\n");
    // A second rotation replaces .1, so the newest lines are what is kept; a batch is split at lines.
    log.append([line(50, "d"), line(50, "e"), line(10, "f")]);
    expect(read(`${path}.1`)).toBe("\n" + line(50, "d"));
    expect(read(path)).toBe(line(50, "e") + line(10, "f"));
    // A line longer than the bound on its own is written whole, alone in its file.
    log.append([line(150, "g"), line(5, "h")]);
    expect(read(`${path}.1`)).toBe(line(150, "g"));
    expect(read(path)).toBe(line(5, "h"));
    log.close();
  });

  it("[host.extensions-log.rotates-at-bound] counts what an earlier daemon of the session left in the file", () => {
    const path = logFile();
    writeFileSync(path, line(95, "o"));
    const log = new RotatingLog(path, 100);
    log.append([line(5, "a")]);
    expect(existsSync(`${path}.1`)).toBe(false);
    log.append([line(1, "b")]);
    expect(read(`${path}.1`)).toBe(line(95, "o") + line(5, "a"));
    expect(read(path)).toBe(line(1, "b"));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    log.close();
    expect(() => new RotatingLog(path, 0)).toThrow(RangeError);
  });
});
