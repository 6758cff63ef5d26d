// The built validators: dist/validators/<Name>.cjs, one per generated schema validator, loaded by
// the bundles on first use (none of them inlines one), each compiled with a V8 code cache.
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MessageReader, REVISION, encodeFrame } from "../../../handwritten/protocol/index.js";
import { REPO_ROOT, TAU_BIN } from "../../support/paths.js";

const DIST_VALIDATORS = join(REPO_ROOT, "dist", "validators");
const dir = mkdtempSync(join(tmpdir(), "tau-validators-dist-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("built validators", () => {
  it("dist/validators holds one self-contained file per generated validator", () => {
    const files = readdirSync(DIST_VALIDATORS).sort();
    expect(files).toEqual(readdirSync(join(REPO_ROOT, "generated", "validators")).sort());
    // Copied where no node_modules can be found, each still loads: it requires no package.
    const alone = join(dir, "alone");
    cpSync(DIST_VALIDATORS, alone, { recursive: true });
    const load = createRequire(join(alone, "x.cjs"));
    for (const f of files) {
      const exports = load(join(alone, f)) as Record<string, unknown>;
      expect(Object.keys(exports)).toEqual([`validate${f.replace(/\.cjs$/, "")}`]);
    }
  });

  it("an extension process loads the validator of configure, the one message it reads, and of its settings, and no other", async () => {
    // Preloaded into the extension: records every file it reads (validator files are read and
    // compiled with a code cache, bin/bundle-loader.cjs), and writes them down at exit.
    const report = join(dir, "loaded.json");
    const preload = join(dir, "preload.cjs");
    writeFileSync(
      preload,
      `const fs = require("node:fs"); const read = fs.readFileSync; const seen = [];
fs.readFileSync = function (p, ...rest) { if (typeof p === "string") seen.push(p); return read.call(this, p, ...rest); };
process.on("exit", () => fs.writeFileSync(${JSON.stringify(report)}, JSON.stringify([...new Set(seen)])));\n`,
    );
    const child = spawn(process.execPath, ["--require", preload, TAU_BIN, "ext", "test-dummy"], { stdio: ["pipe", "pipe", "pipe"] });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const reader = new MessageReader("harness");
    const seen: string[] = [];
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        for (const r of reader.push(chunk)) {
          if (!r.ok) return reject(r.error);
          seen.push(r.message.message);
          if (r.message.message === "hello") {
            const payload = { revision: { ...REVISION }, instance: "dummy", kind: "tool", tool_prefix: "", state_dir: dir, session_id: "s-1", config: {}, secrets: {} };
            child.stdin.write(encodeFrame({ message: "configure", payload }));
          }
          if (r.message.message === "ready") resolve();
        }
      });
      child.once("exit", () => reject(new Error(`exited before ready (saw ${seen.join(", ")})`)));
    });
    const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    try {
      await ready;
      child.stdin.end();
      expect(await exited).toBe(0);
    } finally {
      clearTimeout(killer);
    }
    const loaded = (JSON.parse(readFileSync(report, "utf8")) as string[]).filter((f) => /[\\/]validators[\\/][^/\\]+\.cjs$/.test(f));
    expect(loaded).toEqual([join(DIST_VALIDATORS, "ConfigureMessage.cjs"), join(DIST_VALIDATORS, "TestDummySettings.cjs")]);
    // Each compiled with a code cache, made (at the latest) as the process exited.
    const caches = readdirSync(join(REPO_ROOT, "dist", ".v8-cache"));
    for (const name of ["ConfigureMessage", "TestDummySettings"]) expect(caches.some((f) => f.startsWith(`${name}-`) && f.endsWith(`-${process.version}-${process.arch}.bin`)), name).toBe(true);
  });
});
