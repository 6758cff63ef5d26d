// The bounded output buffer of the shell tool (SPEC-shell-tools).
import { describe, expect, it } from "vitest";
import { HeadTailBuffer, ProgressDelta, limits } from "../../../handwritten/extensions/shell/tools/index.js";
import { withoutSecrets as childEnvironment } from "../../../handwritten/config/index.js";

const HEAD = limits.SHELL_OUTPUT_HEAD_BYTES;
const TAIL = limits.SHELL_OUTPUT_TAIL_BYTES;

function feed(buffer: HeadTailBuffer, total: number, chunk = 4096, fill = (i: number) => 0x61 + (i % 26)): void {
  for (let at = 0; at < total; at += chunk) {
    const size = Math.min(chunk, total - at);
    buffer.push(Buffer.from(Array.from({ length: size }, (_, i) => fill(at + i))));
  }
}

describe("HeadTailBuffer", () => {
  it("[shell.exec.head-tail-truncation] keeps everything up to HEAD+TAIL bytes and cuts one byte above", () => {
    for (const total of [HEAD + TAIL - 1, HEAD + TAIL]) {
      const buffer = new HeadTailBuffer();
      feed(buffer, total);
      const out = buffer.finish();
      expect(out.truncated).toBe(false);
      expect(out.text.length).toBe(total);
    }
    const buffer = new HeadTailBuffer();
    feed(buffer, HEAD + TAIL + 1);
    const out = buffer.finish();
    expect(out.truncated).toBe(true);
    expect(out.omittedBytes).toBe(1);
    expect(out.text).toContain(`[… output truncated: 1 bytes (0 lines) omitted; showing the first ${HEAD} and the last ${TAIL} of ${HEAD + TAIL + 1} bytes …]`);
  });

  it("[shell.exec.head-tail-truncation] keeps the exact head and tail, counts the omitted lines, and retains at most HEAD+TAIL bytes", () => {
    const buffer = new HeadTailBuffer();
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${String(i).padStart(5, "0")}\n`).join("");
    const bytes = Buffer.from(lines);
    for (let at = 0; at < bytes.length; at += 1000) buffer.push(bytes.subarray(at, at + 1000));
    buffer.push(Buffer.alloc(200_000, 0x7a)); // one chunk larger than the tail
    buffer.push(Buffer.from("\nend\n"));
    const out = buffer.finish();
    const all = Buffer.concat([bytes, Buffer.alloc(200_000, 0x7a), Buffer.from("\nend\n")]);
    const marker = out.text.indexOf("[… output truncated");
    const head = all.subarray(0, HEAD).toString();
    expect(out.text.slice(0, marker)).toBe(head.endsWith("\n") ? head : `${head}\n`);
    expect(out.text.slice(out.text.indexOf("\n", marker) + 1)).toBe(all.subarray(all.length - TAIL).toString());
    const omitted = all.subarray(HEAD, all.length - TAIL);
    expect(out.omittedBytes).toBe(omitted.length);
    expect(out.omittedLines).toBe(omitted.toString().split("\n").length - 1);
    expect(buffer.peakRetainedBytes).toBeLessThanOrEqual(HEAD + TAIL);
  });

  it("[shell.exec.head-tail-truncation] cuts at UTF-8 character boundaries", () => {
    const buffer = new HeadTailBuffer(5, 5);
    buffer.push(Buffer.from("aaaa€€€€bbbb€"));
    const out = buffer.finish();
    expect(out.text).not.toContain("\uFFFD");
    expect(out.text.startsWith("aaaa\n[…")).toBe(true);
    expect(out.text.endsWith("\nbb€")).toBe(true);
  });

  it("recent() gives the latest output for progress, bounded", () => {
    const buffer = new HeadTailBuffer(4, 8);
    buffer.push(Buffer.from("abc"));
    expect(buffer.recent(100)).toBe("abc");
    buffer.push(Buffer.from("defghijklmnop"));
    expect(buffer.recent(5)).toBe("lmnop");
    expect(buffer.recent(100)).toBe("ijklmnop");
  });
});

describe("childEnvironment", () => {
  it("[shell.exec.no-secret-env] drops every TAU_SECRET_* variable and nothing else", () => {
    const env = childEnvironment({ PATH: "/bin", TAU_SECRET_X: "s", TAU_SECRET_: "t", TAU_HOME: "/h", MY_TAU_SECRET_Y: "kept" });
    expect(env).toEqual({ PATH: "/bin", TAU_HOME: "/h", MY_TAU_SECRET_Y: "kept" });
  });
});

describe("progress deltas", () => {
  it("[shell.exec.progress-deltas] each report carries only what is new, its newest bytes when more came, cut on whole UTF-8 characters", () => {
    const d = new ProgressDelta(8);
    d.push(Buffer.from("1\n"));
    expect(d.take()).toBe("1\n");
    d.push(Buffer.from("2\n"));
    d.push(Buffer.from("3\n"));
    expect(d.take()).toBe("2\n3\n");
    expect(d.take()).toBe("");
    // A character split across chunks waits for its last byte.
    const e = Buffer.from("é\n");
    d.push(e.subarray(0, 1));
    expect(d.take()).toBe("");
    d.push(e.subarray(1));
    expect(d.take()).toBe("é\n");
    // More than the bound since the last report: its newest bytes, never half a character.
    d.push(Buffer.from("abcdefgh€xyz"));
    expect(d.take()).toBe("gh€xyz");
    d.push(Buffer.from("abc€€€x")); // its newest 8 bytes start inside a character
    expect(d.take()).toBe("€€x");
    // At most twice the bound is held between reports.
    for (let i = 0; i < 100; i++) d.push(Buffer.from("0123456789"));
    expect(d.take()).toBe("23456789");
  });
});
