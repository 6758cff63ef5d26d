// The file tools against a concurrent rename attack (SPEC-shell-tools, "Where a path lands"): a
// second process swaps two entries of the project with renameat2(RENAME_EXCHANGE) in a tight loop
// while `write`, `edit` and `read` run 10,000 times each through the tool code, under the sandbox's
// own filesystem policy (a stand-in config root that is protected, a stand-in credentials folder
// that is deny-read). Not one write may land in the config root, not one read may return the
// credential. The same attack through a real daemon is test/e2e/sandbox/file-tools.test.ts.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToolError, editTool, readTool, writeTool, type FileAccess, type Tool } from "../../../handwritten/extensions/shell/tools/index.js";
import { effectivePolicy, emptyGrants, fileRules, readRefusal, writeVerdict } from "../../../handwritten/extensions/shell/sandbox/index.js";
import { waitFor } from "../../support/wait.js";

const ROUNDS = 10_000;

/** Swaps `a` and `b` (RENAME_EXCHANGE) until `stop` exists; writes `ready` once it runs. */
const SWAPPER = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b, ready, stop = (x.encode() for x in sys.argv[1:5])
open(ready, "w").close()
n = 0
while not os.path.exists(stop):
    for _ in range(200):
        if libc.renameat2(-100, a, -100, b, 2) != 0:
            sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
        n += 1
print(n)
`;

let root = "";
let swapper: ChildProcess | undefined;
afterEach(() => {
  swapper?.kill("SIGKILL");
  swapper = undefined;
  if (root !== "") rmSync(root, { recursive: true, force: true });
  root = "";
});

/**
 * A project beside a config root (protected) and a credentials folder (deny-read), on a memory file
 * system where there is one (fsync is then free, so 10,000 writes take seconds, not minutes).
 */
function layout(): { project: string; config: string; secret: string; access: FileAccess } {
  root = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "tau-file-race-"));
  const project = join(root, "project");
  const config = join(root, "config");
  const secret = join(root, "secret");
  for (const d of [project, config, secret]) mkdirSync(d);
  const roots = { config, state: join(root, "state"), runtime: join(root, "runtime") };
  const policy = effectivePolicy({ filesystem: { deny_read: [secret], allow_write: [project] } }, project, roots, emptyGrants());
  const rules = fileRules(policy, project, "full");
  const access: FileAccess = {
    readRefusal: (real) => readRefusal(rules, real),
    async checkWrite(w) {
      const v = writeVerdict(rules, w);
      if (v.kind === "refused") throw new ToolError("failed", v.why);
      if (v.kind === "ask") throw new ToolError("failed", `outside the writable set: ${v.grant}`);
    },
  };
  return { project, config, secret, access };
}

async function startSwapping(a: string, b: string): Promise<() => Promise<number>> {
  const ready = join(root, "swapping");
  const stop = join(root, "stop");
  const child = spawn("python3", ["-c", SWAPPER, a, b, ready, stop], { stdio: ["ignore", "pipe", "pipe"] });
  swapper = child;
  let out = "";
  child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  await waitFor(() => existsSync(ready) || child.exitCode !== null, "the swapper to start", 20_000);
  return async () => {
    writeFileSync(stop, "");
    const code = await exited;
    swapper = undefined;
    expect(code, out).toBe(0);
    return Number(out.trim());
  };
}

/** Runs `tool` ROUNDS times; counts outcomes by the first words of each refusal. */
async function hammer(tool: Tool, args: (i: number) => Record<string, unknown>, cwd: string, access: FileAccess): Promise<{ ok: number; failures: Map<string, number>; outputs: string[] }> {
  let ok = 0;
  const failures = new Map<string, number>();
  const outputs: string[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    try {
      outputs.push((await tool.run(args(i), { cwd, signal: new AbortController().signal, access })).output);
      ok++;
    } catch (error) {
      if (!(error instanceof ToolError)) throw error;
      const kind = /is protected/.test(error.message) ? "protected" : /moved or replaced/.test(error.message) ? "moved" : /denies reading/.test(error.message) ? "denied" : error.message.slice(0, 60);
      failures.set(kind, (failures.get(kind) ?? 0) + 1);
    }
  }
  return { ok, failures, outputs };
}

describe("the file tools under a rename attack", () => {
  it("[files.race.rename-exchange] 10,000 writes while a folder and a link to the config root are swapped: none lands in the config root", async () => {
    const { project, config, access } = layout();
    mkdirSync(join(project, "d"));
    symlinkSync(config, join(project, "l"));
    const stop = await startSwapping(join(project, "d"), join(project, "l"));
    const r = await hammer(writeTool, (i) => ({ path: "d/sandbox.yaml", content: `enabled: false # ${i}\n` }), project, access);
    const swaps = await stop();
    expect(readdirSync(config)).toEqual([]);
    // The swap redirected the path into the config root, and every such write was refused.
    expect(r.failures.get("protected") ?? 0, JSON.stringify([...r.failures])).toBeGreaterThan(0);
    expect(r.ok + [...r.failures.values()].reduce((a, b) => a + b, 0)).toBe(ROUNDS);
    console.info(`write, folder ↔ link: ${swaps} swaps; ${r.ok} written, refused: ${JSON.stringify(Object.fromEntries(r.failures))}`);
  }, 300_000);

  it("[files.race.rename-exchange] 10,000 writes while two folders are swapped, one holding a link to the config root: none lands in it", async () => {
    const { project, config, access } = layout();
    mkdirSync(join(project, "x", "sub"), { recursive: true });
    mkdirSync(join(project, "y"));
    symlinkSync(config, join(project, "y", "sub"));
    const stop = await startSwapping(join(project, "x"), join(project, "y"));
    const r = await hammer(writeTool, (i) => ({ path: "x/sub/new/sandbox.yaml", content: `enabled: false # ${i}\n` }), project, access);
    const swaps = await stop();
    expect(readdirSync(config)).toEqual([]);
    expect(r.failures.get("protected") ?? 0, JSON.stringify([...r.failures])).toBeGreaterThan(0);
    console.info(`write, folder ↔ folder: ${swaps} swaps; ${r.ok} written, refused: ${JSON.stringify(Object.fromEntries(r.failures))}`);
  }, 300_000);

  it("[files.race.rename-exchange] 10,000 edits while a folder and a link to the config root are swapped: the config root's file never changes", async () => {
    const { project, config, access } = layout();
    mkdirSync(join(project, "d"));
    writeFileSync(join(project, "d", "f.txt"), "alpha\n");
    writeFileSync(join(config, "f.txt"), "alpha\n");
    symlinkSync(config, join(project, "l"));
    const stop = await startSwapping(join(project, "d"), join(project, "l"));
    const r = await hammer(editTool, (i) => ({ path: "d/f.txt", edits: i % 2 === 0 ? [{ old_text: "alpha", new_text: "beta" }] : [{ old_text: "beta", new_text: "alpha" }] }), project, access);
    const swaps = await stop();
    expect(readdirSync(config)).toEqual(["f.txt"]);
    expect(readFileSync(join(config, "f.txt"), "utf8")).toBe("alpha\n");
    expect(r.failures.get("protected") ?? 0, JSON.stringify([...r.failures])).toBeGreaterThan(0);
    console.info(`edit: ${swaps} swaps; ${r.ok} edited, refused: ${JSON.stringify(Object.fromEntries(r.failures))}`);
  }, 300_000);

  it("[files.race.rename-exchange] 10,000 reads while a folder and a link to a deny-read folder are swapped: the credential is never returned", async () => {
    const { project, secret, access } = layout();
    mkdirSync(join(project, "d"));
    writeFileSync(join(project, "d", "notes.txt"), "public notes\n");
    writeFileSync(join(secret, "notes.txt"), "PRIVATE-KEY-BYTES\n");
    symlinkSync(secret, join(project, "l"));
    const stop = await startSwapping(join(project, "d"), join(project, "l"));
    const r = await hammer(readTool, () => ({ path: "d/notes.txt" }), project, access);
    const swaps = await stop();
    expect(r.outputs.filter((o) => o.includes("PRIVATE-KEY-BYTES"))).toEqual([]);
    expect(r.outputs.every((o) => o.includes("public notes"))).toBe(true);
    expect(r.failures.get("denied") ?? 0, JSON.stringify([...r.failures])).toBeGreaterThan(0);
    console.info(`read: ${swaps} swaps; ${r.ok} read, refused: ${JSON.stringify(Object.fromEntries(r.failures))}`);
  }, 300_000);
});
