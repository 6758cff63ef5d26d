// The sandbox runtime's bridge sockets are listed with the reaper before any bridge starts
// (SPEC-sandbox, "Nothing outlives the session"): a shell extension killed between naming a
// bridge's socket and finding the bridge's process leaves no socket file behind.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BRIDGE_PARENT_ENV, socatDyingWithParent } from "../../../handwritten/extensions/shell/sandbox/parent-death.js";
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
    const [path, proxy] = out.trim().split("\n") as [string, string];
    expect(path).toMatch(/\/claude-http-[0-9a-f]{16}\.sock$/);
    expect(proxy).toMatch(/\/srt-mux-\d+-0\.sock$/);
    await waitFor(() => !existsSync(path) && !existsSync(proxy), "the reaper to remove the bridge's and the proxy's sockets", 5_000);
    expect(readdirSync(temp).filter((f) => f.endsWith(".sock"))).toEqual([]);
  });

  it("[sandbox.leak.bridge-parent-checked] a bridge whose extension died before its script ran starts no socat", async () => {
    const temp = mkdtempSync(join(tmpdir(), "tau-bridge-"));
    dirs.push(temp);
    // The script as the extension writes it; its parent named in the environment is another
    // process (as when the extension died before the script started and it went to a new parent).
    const saved = process.env[BRIDGE_PARENT_ENV];
    const script = socatDyingWithParent(temp) as string;
    if (saved === undefined) delete process.env[BRIDGE_PARENT_ENV];
    else process.env[BRIDGE_PARENT_ENV] = saved;
    const sock = join(temp, "claude-http-0000000000000000.sock");
    const gone = spawnSync(script, [`UNIX-LISTEN:${sock},fork`, "TCP:127.0.0.1:9"], { env: { ...process.env, [BRIDGE_PARENT_ENV]: "1" }, timeout: 5_000 });
    expect(gone.status).toBe(1);
    expect(existsSync(sock)).toBe(false);
    // Its real parent named: the bridge starts (and is ended here).
    const bridge = spawn(script, [`UNIX-LISTEN:${sock},fork`, "TCP:127.0.0.1:9"], { env: { ...process.env, [BRIDGE_PARENT_ENV]: String(process.pid) }, stdio: "ignore" });
    try {
      await waitFor(() => existsSync(sock), "the bridge to listen", 5_000);
    } finally {
      bridge.kill("SIGTERM");
    }
    await waitFor(() => !existsSync(sock), "the bridge to remove its socket on SIGTERM", 5_000);
  });
});
