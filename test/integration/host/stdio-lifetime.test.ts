// An extension lives exactly as long as its harness's pipe: when its input ends it exits, whatever
// its output is (a pipe, or a file when someone runs `tau ext NAME > out`).
import { spawn } from "node:child_process";
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MessageReader } from "../../../handwritten/protocol/index.js";
import { TAU_BIN } from "../../support/paths.js";
import { waitFor } from "../../support/wait.js";

const dir = mkdtempSync(join(tmpdir(), "tau-ext-stdio-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("extension stdio lifetime", () => {
  it("[sdk.stdio.exit-on-end] exits when its input ends, also with its output written to a file", async () => {
    const outPath = join(dir, "out.bin");
    const out = openSync(outPath, "w");
    const child = spawn(process.execPath, [TAU_BIN, "ext", "test-dummy"], { stdio: ["pipe", out, "pipe"] });
    closeSync(out);
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    // It says hello before its input ends (it then exits either way).
    const written = () => [...new MessageReader("harness").push(readFileSync(outPath))];
    await waitFor(() => written().length > 0, "the hello frame in the output file", 20_000);
    child.stdin?.end();
    const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    const { code, signal } = await exited;
    clearTimeout(killer);
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: "" });
    // What it wrote before its input ended is one hello frame.
    const frames = written();
    expect(frames.map((f) => (f.ok ? f.message.message : f.error.code))).toEqual(["hello"]);
  });

  it("[timeline.marks] with TAU_TIMELINE set, a process appends its start and milestones as epoch-ms pid label lines", async () => {
    const file = join(dir, "timeline.txt");
    const child = spawn(process.execPath, [TAU_BIN, "ext", "test-dummy"], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, TAU_TIMELINE: file } });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    // The hello frame is on stdout once the process is up; then its input ends.
    await new Promise<void>((resolve) => child.stdout?.once("data", () => resolve()));
    child.stdin?.end();
    expect(await exited).toBe(0);
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => l.split(" "));
    expect(lines.map((l) => l.slice(2).join(" "))).toEqual(["ext test-dummy exec", "ext test-dummy main"]);
    for (const [t, pid] of lines) {
      expect(Number(pid)).toBe(child.pid);
      expect(Math.abs(Number(t) - Date.now())).toBeLessThan(60_000);
    }
  });
});
