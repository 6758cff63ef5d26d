// Stdio MCP servers start inside the sandbox (SPEC-mcp, "The sandbox"), end to end: the real `tau
// run`, its daemon, `tau ext mcp`, the sandbox runtime and the SDK-built fixture server, against the
// scripted model.
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI, type Workspace } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse } from "../../support/fake-openai.js";
import { extensionsLog, mcpWorkspace, toolMessage } from "../../support/mcp.js";
import { runTau } from "../../support/run-tau.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();
const FIXTURE = join(import.meta.dirname, "../../fixtures/mcp/server.mjs");

const workspace = (servers: Record<string, unknown>): Workspace => mcpWorkspace(cleanups, fake, servers);

/** The pids of processes whose command line holds `marker`. */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(join("/proc", name, "cmdline"), "utf8").includes(marker)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

describe("stdio MCP servers in the sandbox, through tau run", () => {
  it("[mcp.sandbox.default-on] a server runs inside the sandbox unless its entry says sandbox: false: the sandboxed one cannot write outside the project, the opted-out one can and is reported unsandboxed", async () => {
    const w = workspace({
      boxed: { command: process.execPath, args: [FIXTURE, "tools"], wait_at_start: true },
      // Unsandboxed, its calls would be asked about (ask: writes by default), and tau run has nobody to ask.
      free: { command: process.execPath, args: [FIXTURE, "tools"], wait_at_start: true, sandbox: false, ask: "never" },
    });
    const boxedFile = join(w.home, "boxed-escape.txt");
    const freeFile = join(w.home, "free-escape.txt");
    fake.enqueue(
      toolCallResponse([
        { id: "call_boxed", name: "mcp__boxed__probe", arguments: JSON.stringify({ write: boxedFile }) },
        { id: "call_inside", name: "mcp__boxed__probe", arguments: JSON.stringify({ write: join(w.project, "inside.txt") }) },
        { id: "call_free", name: "mcp__free__probe", arguments: JSON.stringify({ write: freeFile }) },
      ]),
      textResponse("probed"),
    );
    const r = await runTau(["run", "-p", "probe"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    const second = fake.chatRequests[1]!;
    expect(toolMessage(second, "call_boxed")).toMatch(/write: failed/);
    expect(existsSync(boxedFile)).toBe(false);
    expect(toolMessage(second, "call_inside")).toContain("write: ok");
    expect(existsSync(join(w.project, "inside.txt"))).toBe(true);
    expect(toolMessage(second, "call_free")).toContain("write: ok");
    expect(existsSync(freeFile)).toBe(true);
    const log = extensionsLog(w.home);
    expect(log).toContain("mcp server free: runs unsandboxed, with your full rights (sandbox: false in its entry)");
    expect(log).not.toContain("mcp server boxed: runs unsandboxed");
  }, 120_000);

  it("[mcp.sandbox.no-sandbox-flag] tau run --no-sandbox runs a stdio server unsandboxed and says so", async () => {
    const w = workspace({ boxed: { command: process.execPath, args: [FIXTURE, "tools"], wait_at_start: true, ask: "never" } });
    const outside = join(w.home, "escape.txt");
    fake.enqueue(toolCallResponse([{ id: "call_out", name: "mcp__boxed__probe", arguments: JSON.stringify({ write: outside }) }]), textResponse("probed"));
    const r = await runTau(["run", "--no-sandbox", "-p", "probe"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    expect(toolMessage(fake.chatRequests[1]!, "call_out")).toContain("write: ok");
    expect(extensionsLog(w.home)).toMatch(/mcp server boxed: runs unsandboxed, with your full rights \(--no-sandbox/);
  }, 120_000);

  it("[mcp.sandbox.no-orphans] a sandboxed server that ignores the end of its input and SIGTERM does not outlive the session", async () => {
    const marker = `tau-orphan-check-${process.pid}-${Date.now()}`;
    const w = workspace({ stubborn: { command: process.execPath, args: [FIXTURE, "stubborn", marker], wait_at_start: true } });
    fake.enqueue(textResponse("bye"));
    const r = await runTau(["run", "-p", "hello"], { env: w.env, cwd: w.project });
    expect(r.code, r.stderr).toBe(0);
    expect(extensionsLog(w.home)).toContain("mcp server stubborn: ready");
    await waitFor(() => processesWith(marker).length === 0, "the sandboxed stubborn server to be gone", 15_000);
  }, 120_000);
});
