// The sandbox runtime's bridge sockets are listed with the reaper before any bridge starts
// (SPEC-sandbox, "Nothing outlives the session"): a shell extension killed between naming a
// bridge's socket and finding the bridge's process leaves no socket file behind.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../support/paths.js";
import { waitFor } from "../../support/wait.js";

const FIXTURE = join(REPO_ROOT, "test", "fixtures", "shell", "bridge-named-then-killed.ts");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("the runtime's bridge sockets", () => {
  it("[sandbox.leak.bridge-socket-listed-first] a socket named for a bridge is removed when its extension is killed before any scan found the bridge", async () => {
    const temp = mkdtempSync(join(tmpdir(), "tau-bridge-"));
    dirs.push(temp);
    const child = spawn(process.execPath, ["--import", "tsx", FIXTURE], { cwd: REPO_ROOT, env: { ...process.env, TMPDIR: temp }, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, s) => resolve(s)));
    expect(signal).toBe("SIGKILL");
    const path = out.trim();
    expect(path).toMatch(/\/claude-http-[0-9a-f]{16}\.sock$/);
    await waitFor(() => !existsSync(path), "the reaper to remove the bridge's socket", 5_000);
    expect(readdirSync(temp).filter((f) => f.endsWith(".sock"))).toEqual([]);
  });
});
