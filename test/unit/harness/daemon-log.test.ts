// The daemon keeps its own log bounded: past the bound the contents move to daemon.log.1 and the
// file, still open for appending on the daemon's descriptors, starts again.
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { trimDaemonLog } from "../../../handwritten/harness/daemon-log.js";

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop() as string, { recursive: true, force: true });
});

describe("the daemon's log", () => {
  it("[daemon.log.bounded] past the bound the log moves to daemon.log.1 and starts again on the same descriptor; another file or a small log is left alone", () => {
    const dir = mkdtempSync(join(tmpdir(), "tau-dlog-"));
    dirs.push(dir);
    const path = join(dir, "daemon.log");
    const fd = openSync(path, "a", 0o600); // as the launcher opens it
    try {
      writeSync(fd, "a".repeat(100));
      expect(trimDaemonLog(path, fd, 100)).toBe(false); // exactly at the bound
      writeSync(fd, "b");
      const other = join(dir, "other.log");
      expect(trimDaemonLog(other, fd, 100)).toBe(false); // the descriptor is not that file
      expect(existsSync(`${path}.1`)).toBe(false);
      expect(trimDaemonLog(path, fd, 100)).toBe(true); // one above
      expect(readFileSync(`${path}.1`, "utf8")).toBe(`${"a".repeat(100)}b`);
      expect(readFileSync(path, "utf8")).toBe("");
      writeSync(fd, "after\n"); // appends land at the start of the emptied file
      expect(readFileSync(path, "utf8")).toBe("after\n");
    } finally {
      closeSync(fd);
    }
  });
});
