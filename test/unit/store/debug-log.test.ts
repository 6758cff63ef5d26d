import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  DebugLogWriter,
  REDACTED,
  cleanupDebugLogs,
  debugLog,
  debugLogPath,
  formatDebugLine,
  mirrorDebugEvent,
  nodeDebugLogIo,
  redact,
  setDebugRedactor,
  type DebugLogIo,
} from "../../../handwritten/store/debug-log.js";
import { acquireJournalLock } from "../../../handwritten/store/lock.js";
import {
  DEBUG_FIFO_MAX_BYTES,
  DEBUG_FIFO_MAX_LINES,
  DEBUG_LOG_MAX_DEPTH,
  DEBUG_LOG_MAX_LINE_BYTES,
  DEBUG_LOG_MAX_STRING_CHARS,
  DEBUG_LOG_REDACT_BUDGET,
  DEBUG_LOG_RETENTION_MS,
} from "../../../handwritten/store/limits.js";
import { tempDir } from "./helpers.js";

const tick = () => new Promise((r) => setImmediate(r));

function sessionLog(id = "s1"): { state: string; file: string } {
  const state = tempDir();
  fs.mkdirSync(path.join(state, "sessions", id), { recursive: true });
  return { state, file: debugLogPath(state, id) };
}

/** Real I/O whose open waits until the gate is opened: holds the writer with its first line in flight. */
function gatedIo(): { io: DebugLogIo; open: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  return {
    io: { ...nodeDebugLogIo, open: async (f) => (await gate, nodeDebugLogIo.open(f)) },
    open: () => release(),
  };
}

function collector() {
  const warnings: string[] = [];
  return { warnings, warn: (m: string) => warnings.push(m) };
}

const fileLines = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "").split("\n").filter((l) => l !== "");

describe("debug events.jsonl mirror", () => {
  it("writes admitted lines in order, taking and releasing events.jsonl.lock per line", async () => {
    const { file } = sessionLog();
    const c = collector();
    const w = new DebugLogWriter({ warn: c.warn });
    for (let i = 0; i < 20; i++) expect(w.admit(file, formatDebugLine({ name: "agent.message", i }))).toBe(true);
    await w.idle();
    expect(fileLines(file).map((l) => (JSON.parse(l) as { i: number }).i)).toEqual([...Array(20).keys()]);
    expect(fs.existsSync(file + ".lock")).toBe(false);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(w.stats()).toMatchObject({ lines: 0, bytes: 0, written: 20, dropped: 0, warnings: 0 });
    expect(c.warnings).toEqual([]);
  });

  it("drops a line whose lock another holder has, with one warning, and carries on", async () => {
    const { file } = sessionLog();
    const c = collector();
    const w = new DebugLogWriter({ warn: c.warn });
    const held = acquireJournalLock(file);
    w.admit(file, "{\"a\":1}\n");
    w.admit(file, "{\"a\":2}\n");
    await w.idle();
    held.release();
    w.admit(file, "{\"a\":3}\n");
    await w.idle();
    expect(fileLines(file)).toEqual(["{\"a\":3}"]);
    expect(c.warnings).toEqual(["debug log: dropped 2 lines (lock busy)"]);
  });

  it("refuses incomplete lines and lines over DEBUG_LOG_MAX_LINE_BYTES (at / one below / one above)", async () => {
    expect(DEBUG_LOG_MAX_LINE_BYTES).toBe(64 * 1024);
    const { file } = sessionLog();
    const c = collector();
    const w = new DebugLogWriter({ warn: c.warn });
    const line = (bytes: number) => "x".repeat(bytes - 1) + "\n";
    expect(w.admit(file, line(DEBUG_LOG_MAX_LINE_BYTES - 1))).toBe(true);
    expect(w.admit(file, line(DEBUG_LOG_MAX_LINE_BYTES))).toBe(true);
    expect(w.admit(file, line(DEBUG_LOG_MAX_LINE_BYTES + 1))).toBe(false);
    expect(w.admit(file, "no newline")).toBe(false);
    expect(w.admit(file, "two\nlines\n")).toBe(false);
    await w.idle();
    expect(fs.statSync(file).size).toBe(2 * DEBUG_LOG_MAX_LINE_BYTES - 1);
    expect(c.warnings).toEqual(["debug log: dropped 3 lines (line too long or incomplete)"]);
  });

  it("FIFO bounds hold at exactly 1,024 lines and 64 MiB of line-plus-path bytes, in-flight line included", async () => {
    expect([DEBUG_FIFO_MAX_LINES, DEBUG_FIFO_MAX_BYTES]).toEqual([1024, 64 * 1024 * 1024]);
    const { file } = sessionLog();
    const P = Buffer.byteLength(file);
    // Lines: 1,023 and 1,024 admitted (the first is in flight, still counted), the 1,025th refused.
    {
      const g = gatedIo();
      const w = new DebugLogWriter({ io: g.io, warn: () => {} });
      for (let i = 0; i < DEBUG_FIFO_MAX_LINES - 1; i++) expect(w.admit(file, `{"i":${i}}\n`)).toBe(true);
      await tick();
      expect(w.stats()).toMatchObject({ lines: DEBUG_FIFO_MAX_LINES - 1, inFlight: true });
      expect(w.admit(file, "{}\n")).toBe(true);
      expect(w.stats().lines).toBe(DEBUG_FIFO_MAX_LINES);
      expect(w.admit(file, "{}\n")).toBe(false);
      g.open();
      await w.idle();
      expect(w.stats()).toMatchObject({ lines: 0, bytes: 0, written: DEBUG_FIFO_MAX_LINES, dropped: 1, peakLines: DEBUG_FIFO_MAX_LINES });
    }
    // Bytes: 1,023 maximal lines, then a last line that brings the total to max−1, max, or max+1.
    const big = "y".repeat(DEBUG_LOG_MAX_LINE_BYTES - 1) + "\n";
    const k = Math.floor(DEBUG_FIFO_MAX_BYTES / (DEBUG_LOG_MAX_LINE_BYTES + P));
    expect(k).toBe(DEBUG_FIFO_MAX_LINES - 1);
    const rest = DEBUG_FIFO_MAX_BYTES - k * (DEBUG_LOG_MAX_LINE_BYTES + P);
    for (const [delta, admitted] of [[-1, true], [0, true], [1, false]] as const) {
      const g = gatedIo();
      const w = new DebugLogWriter({ io: g.io, warn: () => {} });
      for (let i = 0; i < k; i++) expect(w.admit(file, big)).toBe(true);
      const lastLen = rest - P + delta;
      expect(w.admit(file, "z".repeat(lastLen - 1) + "\n")).toBe(admitted);
      expect(w.stats().bytes).toBe(admitted ? DEBUG_FIFO_MAX_BYTES + delta : DEBUG_FIFO_MAX_BYTES - rest);
      if (delta === 0) expect(w.admit(file, "\n")).toBe(false); // full to the byte: even a 1-byte line is refused
      expect(w.stats().bytes).toBeLessThanOrEqual(DEBUG_FIFO_MAX_BYTES);
      // Let it drain without writing 64 MiB: drop everything at open.
      g.open();
      (g.io as { open: DebugLogIo["open"] }).open = async () => {
        throw Object.assign(new Error("ENOSPC"), { code: "ENOSPC" });
      };
      await w.idle();
    }
  });

  it("[debug-log.fifo.bounded-under-flood] a flood far beyond the bounds never exceeds 1,024 lines or 64 MiB and drops with one coalesced warning", async () => {
    const { file } = sessionLog();
    const c = collector();
    const w = new DebugLogWriter({ warn: c.warn });
    const pads = [16, 1000, 8000, 30_000, DEBUG_LOG_MAX_LINE_BYTES - 64].map((n) => "p".repeat(n));
    let offered = 0;
    let admitted = 0;
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < 1000; i++) {
        const line = `{"i":${offered},"pad":"${pads[(offered * 7) % pads.length]}"}\n`;
        offered++;
        if (w.admit(file, line)) admitted++;
        const s = w.stats();
        if (s.lines > DEBUG_FIFO_MAX_LINES || s.bytes > DEBUG_FIFO_MAX_BYTES) throw new Error(`bound exceeded: ${JSON.stringify(s)}`);
      }
      await tick(); // let the detached writer make some progress between bursts
    }
    await w.idle();
    const s = w.stats();
    expect(s.peakLines).toBeLessThanOrEqual(DEBUG_FIFO_MAX_LINES);
    expect(s.peakBytes).toBeLessThanOrEqual(DEBUG_FIFO_MAX_BYTES);
    // The flood really pressed on a bound.
    expect(s.peakLines === DEBUG_FIFO_MAX_LINES || s.peakBytes > DEBUG_FIFO_MAX_BYTES - DEBUG_LOG_MAX_LINE_BYTES - 1000).toBe(true);
    expect(s.admitted).toBe(admitted);
    expect(s.written + s.dropped).toBe(offered);
    expect(s.dropped).toBeGreaterThan(offered / 2);
    expect(c.warnings).toEqual([`debug log: dropped ${s.dropped} lines (fifo full)`]);
    // What was written is an ordered subsequence of complete lines.
    const idx = fileLines(file).map((l) => (JSON.parse(l) as { i: number }).i);
    expect(idx.length).toBe(s.written);
    for (let i = 1; i < idx.length; i++) expect(idx[i]!).toBeGreaterThan(idx[i - 1]!);
    // After recovery a new episode warns again, once.
    expect(w.admit(file, "{}\n")).toBe(true);
    await w.idle();
    expect(c.warnings.length).toBe(1);
  });

  it("[debug-log.rollback.poison] an injected write failure rolls back to the exact end; a failed truncate poisons the writer for good", async () => {
    const { file } = sessionLog();
    const c = collector();
    const fault = { failWrite: false, shortWrite: false, failTruncate: false };
    const io: DebugLogIo = {
      ...nodeDebugLogIo,
      write: async (h, buf, off, len, pos) => {
        if (fault.shortWrite) return 0;
        if (fault.failWrite) {
          await h.write(buf, off, Math.min(len, 7), pos); // a real partial write, then the error
          throw Object.assign(new Error("injected EIO"), { code: "EIO" });
        }
        return nodeDebugLogIo.write(h, buf, off, len, pos);
      },
      truncate: async (h, len) => {
        if (fault.failTruncate) throw Object.assign(new Error("injected truncate failure"), { code: "EIO" });
        return nodeDebugLogIo.truncate(h, len);
      },
    };
    const w = new DebugLogWriter({ io, warn: c.warn });
    w.admit(file, "{\"n\":1}\n");
    await w.idle();
    const good = fs.readFileSync(file);

    fault.failWrite = true;
    w.admit(file, "{\"n\":2,\"long\":\"0123456789\"}\n");
    await w.idle();
    expect(fs.readFileSync(file).equals(good)).toBe(true);
    fault.failWrite = false;
    fault.shortWrite = true;
    w.admit(file, "{\"n\":3}\n");
    await w.idle();
    expect(fs.readFileSync(file).equals(good)).toBe(true);
    expect(c.warnings).toEqual(["debug log: dropped 1 line (I/O failure)", "debug log: dropped 1 line (I/O failure)"]);
    fault.shortWrite = false;
    w.admit(file, "{\"n\":4}\n");
    await w.idle();
    expect(fileLines(file)).toEqual(["{\"n\":1}", "{\"n\":4}"]);
    expect(w.stats().poisoned).toBe(false);

    // Write fails and so does the rollback: the end is uncertain, so the writer stops for the process.
    fault.failWrite = true;
    fault.failTruncate = true;
    w.admit(file, "{\"n\":5}\n");
    w.admit(file, "{\"n\":6}\n"); // queued behind the poisoning line: dropped too
    await w.idle();
    expect(w.stats().poisoned).toBe(true);
    const poisonedSize = fs.statSync(file).size;
    fault.failWrite = false;
    fault.failTruncate = false;
    expect(w.admit(file, "{\"n\":7}\n")).toBe(false);
    await w.idle();
    await tick();
    expect(fs.statSync(file).size).toBe(poisonedSize);
    expect(c.warnings.length).toBe(3);
    expect(c.warnings[2]).toMatch(/^debug log: writer disabled for this process after a failed rollback of .*events\.jsonl \(injected truncate failure\)/);
    expect(w.stats()).toMatchObject({ written: 2, dropped: 5, poisoned: true });
    expect(fs.existsSync(file + ".lock")).toBe(false);
  });

  it("redacts secret-like keys, truncates long strings and bounds lines; the hook point can be replaced", () => {
    expect(DEBUG_LOG_MAX_STRING_CHARS).toBe(4096);
    const out = redact({
      api_key: "sk-123",
      Authorization: "Bearer abc",
      nested: { refreshToken: "t", password: { deep: 1 }, keep: "ok" },
      input_tokens: 42,
      at: "a".repeat(DEBUG_LOG_MAX_STRING_CHARS),
      above: "b".repeat(DEBUG_LOG_MAX_STRING_CHARS + 1),
      bytes: new Uint8Array(3),
      big: 10n,
    }) as Record<string, unknown>;
    expect(out.api_key).toBe(REDACTED);
    expect(out.Authorization).toBe(REDACTED);
    expect(out.nested).toEqual({ refreshToken: REDACTED, password: REDACTED, keep: "ok" });
    expect(out.input_tokens).toBe(42);
    expect((out.at as string).length).toBe(DEBUG_LOG_MAX_STRING_CHARS);
    expect(out.above).toBe("b".repeat(DEBUG_LOG_MAX_STRING_CHARS) + "…[truncated 1 chars]");
    expect(out.bytes).toBe("[3 bytes]");
    expect(out.big).toBe("10");
    const cyclic: Record<string, unknown> = { name: "x" };
    cyclic.self = cyclic;
    expect(JSON.parse(formatDebugLine(cyclic))).toEqual({ name: "x", self: "[circular]" });

    // Many long strings: the line would exceed the bound, so a summary replaces it.
    const huge = { name: "provider.request", parts: Array.from({ length: 40 }, () => "q".repeat(4000)) };
    const line = formatDebugLine(huge);
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(DEBUG_LOG_MAX_LINE_BYTES);
    expect(JSON.parse(line)).toMatchObject({ name: "provider.request" });
    expect((JSON.parse(line) as { _truncated_bytes: number })._truncated_bytes).toBeGreaterThan(DEBUG_LOG_MAX_LINE_BYTES);

    setDebugRedactor((v) => ({ ...(redact(v) as object), extra: "hooked" }));
    try {
      expect(JSON.parse(formatDebugLine({ a: 1 }))).toEqual({ a: 1, extra: "hooked" });
    } finally {
      setDebugRedactor(null);
    }
    expect(JSON.parse(formatDebugLine({ a: 1 }))).toEqual({ a: 1 });
  });

  it("default redaction keeps objects nested up to DEBUG_LOG_MAX_DEPTH levels (at / one below / one above)", () => {
    expect(DEBUG_LOG_MAX_DEPTH).toBe(16);
    // nest(k): k nested objects, the outermost at depth 0 and the innermost at depth k-1.
    const nest = (k: number): unknown => (k === 1 ? { leaf: true } : { a: nest(k - 1) });
    const innermost = (v: unknown): unknown => {
      let cur = v;
      while (typeof cur === "object" && cur !== null && "a" in cur) cur = (cur as { a: unknown }).a;
      return cur;
    };
    expect(innermost(redact(nest(DEBUG_LOG_MAX_DEPTH - 1)))).toEqual({ leaf: true });
    expect(innermost(redact(nest(DEBUG_LOG_MAX_DEPTH)))).toEqual({ leaf: true });
    expect(innermost(redact(nest(DEBUG_LOG_MAX_DEPTH + 1)))).toBe("[too deep]");
  });

  it("[debug-log.redact.bounded-work] default redaction stops walking past its budget: the rest of each container is elided, so a huge event costs about one line's worth", () => {
    // Each element is a value (2) with one key "k" (1 + 3) holding a value (2): 8 per element.
    const per = 8;
    const fits = DEBUG_LOG_REDACT_BUDGET / per - 1; // the array itself costs 2
    const small = redact(Array.from({ length: fits - 1 }, () => ({ k: 1 }))) as unknown[];
    expect(small).toHaveLength(fits - 1);
    expect(small.at(-1)).toEqual({ k: 1 });
    const huge = redact({ maps: Array.from({ length: 500_000 }, () => ({ k: 1 })), after: "x" }) as { maps: unknown[]; "…"?: string };
    expect(huge.maps.length).toBeLessThanOrEqual(fits + 1);
    expect(huge.maps.at(-1)).toMatch(/^\[\d+ more items\]$/);
    expect(Number(/\d+/.exec(String(huge.maps.at(-1)))?.[0]) + huge.maps.length - 1).toBe(500_000);
    expect(huge["…"]).toBe("[1 more keys]");
    // Strings count by their length: a few long ones use the budget up as well.
    const strings = redact(Array.from({ length: 100 }, () => "s".repeat(DEBUG_LOG_MAX_STRING_CHARS))) as unknown[];
    expect(strings.length).toBeLessThan(20);
    expect(strings.at(-1)).toMatch(/more items\]$/);
  });

  it("mirrorDebugEvent uses the one lazy process-wide writer", async () => {
    const { state, file } = sessionLog("s9");
    expect(debugLog()).toBe(debugLog());
    expect(mirrorDebugEvent(state, "s9", { name: "x.y", token: "secret" })).toBe(true);
    expect(mirrorDebugEvent(state, "../evil", { name: "x.y" })).toBe(false);
    await debugLog().idle();
    expect(fileLines(file)).toEqual([JSON.stringify({ name: "x.y", token: REDACTED })]);
  });

  it("[debug-log.cleanup.window] removes only old unlocked events.jsonl regular files; locked, fresh, symlinked and journal files are untouched; exactly at the window is kept", () => {
    expect(DEBUG_LOG_RETENTION_MS).toBe(14 * 24 * 60 * 60 * 1000);
    const state = tempDir();
    const outside = tempDir();
    const T = 1_700_000_000; // whole seconds, so mtimeMs is exact
    const mk = (rel: string, content = "x\n") => {
      const p = path.join(state, rel);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, content);
      fs.utimesSync(p, T, T);
      return p;
    };
    const old = mk("sessions/old/events.jsonl");
    const journals = ["sessions/old/events.cbor", "sessions/old/restore-events.cbor", "sessions/old/meta.json", "sessions/old/other.jsonl"].map((r) => mk(r));
    const agentLog = mk("agents/a1/events.jsonl");
    const agentJournal = mk("agents/a1/events.cbor");
    const locked = mk("sessions/busy/events.jsonl");
    const fresh = path.join(state, "sessions/fresh/events.jsonl");
    // Symlinked log file, and a symlinked session directory, both pointing at old files outside.
    const target = path.join(outside, "target.jsonl");
    fs.writeFileSync(target, "t\n");
    fs.utimesSync(target, T, T);
    fs.mkdirSync(path.join(state, "sessions/sym"), { recursive: true });
    fs.symlinkSync(target, path.join(state, "sessions/sym/events.jsonl"));
    fs.mkdirSync(path.join(outside, "sess"));
    const outsideLog = path.join(outside, "sess/events.jsonl");
    fs.writeFileSync(outsideLog, "o\n");
    fs.utimesSync(outsideLog, T, T);
    fs.symlinkSync(path.join(outside, "sess"), path.join(state, "sessions/linked"));
    // A directory named events.jsonl is not a regular file.
    fs.mkdirSync(path.join(state, "sessions/dir/events.jsonl"), { recursive: true });

    const mtime = fs.statSync(old).mtimeMs;
    expect(mtime).toBe(T * 1000);
    const hold = acquireJournalLock(locked);
    try {
      // One below and exactly at the window: nothing is removed.
      for (const now of [mtime + DEBUG_LOG_RETENTION_MS - 1, mtime + DEBUG_LOG_RETENTION_MS]) {
        const r = cleanupDebugLogs(state, { now });
        expect(r).toEqual({ removed: [], locked: [], errors: [] });
        expect(fs.existsSync(old)).toBe(true);
      }
      // One above: the old unlocked log goes; everything else stays.
      mk("sessions/fresh/events.jsonl");
      fs.utimesSync(fresh, T + 1, T + 1);
      const r = cleanupDebugLogs(state, { now: mtime + DEBUG_LOG_RETENTION_MS + 1 });
      expect(r.removed).toEqual([old]);
      expect(r.locked).toEqual([locked]);
      expect(r.errors).toEqual([]);
    } finally {
      hold.release();
    }
    expect(fs.existsSync(old)).toBe(false);
    expect(fs.existsSync(old + ".lock")).toBe(false);
    for (const p of [...journals, agentLog, agentJournal, locked, fresh, target, outsideLog]) expect(fs.existsSync(p)).toBe(true);
    expect(fs.lstatSync(path.join(state, "sessions/sym/events.jsonl")).isSymbolicLink()).toBe(true);
    expect(fs.statSync(path.join(state, "sessions/dir/events.jsonl")).isDirectory()).toBe(true);
    // The default window is 14 days, and a missing sessions directory is simply nothing to do.
    expect(cleanupDebugLogs(state, { now: T * 1000 + DEBUG_LOG_RETENTION_MS + 1 }).removed).toEqual([locked]);
    expect(cleanupDebugLogs(tempDir())).toEqual({ removed: [], locked: [], errors: [] });
  });
});
