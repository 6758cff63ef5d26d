// A real daemon with the default extensions, the loopback OpenAI-compatible server as its model and
// real bubblewrap: a session in which a test has the model call `shell` and answers the sandbox's
// prompts as an attached UI would (SPEC-sandbox).
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, expect } from "vitest";
import { TestClient, startDaemon, type StartedDaemon } from "../../support/daemon.js";
import { commandLine, killTree, processTree, workspaceIn, type Workspace } from "../../support/e2e.js";
import { waitFor } from "../../support/wait.js";
import { textResponse, toolCallResponse, type FakeOpenAI, type ScriptedResponse } from "../../support/fake-openai.js";

export interface SandboxSessionOptions {
  /** The global sandbox.yaml (none when absent). */
  readonly globalYaml?: string;
  /** The project's .tau/sandbox.yaml (none when absent). */
  readonly projectYaml?: string;
  /** Record the project as trusted. */
  readonly trusted?: boolean;
  /** Extra daemon arguments (`--harness-config sandbox.enabled=false`, …). */
  readonly daemonArgs?: readonly string[];
  /** The daemon's environment on top of the workspace's (PATH without bwrap, …), or made from the workspace (HOME in it, …). */
  readonly env?: NodeJS.ProcessEnv | ((w: Workspace) => NodeJS.ProcessEnv);
  /** The global harness.yaml (default: the fake server's model). */
  readonly harnessYaml?: string;
  /** An earlier session's workspace (its tau home and project): a new session starts in it. */
  readonly workspace?: Workspace;
}

export interface Delivered {
  readonly name: string;
  readonly data: Record<string, unknown>;
}

export class SandboxSession {
  private calls = 0;
  private commands = 0;
  private constructor(
    readonly w: Workspace,
    readonly daemon: StartedDaemon,
    readonly client: TestClient,
    readonly agentId: string,
    private readonly fake: FakeOpenAI,
  ) {}

  static async start(fake: FakeOpenAI, cleanups: Array<() => void>, o: SandboxSessionOptions = {}): Promise<SandboxSession> {
    const base = o.workspace ?? (o.harnessYaml !== undefined ? workspaceIn(cleanups, o.harnessYaml) : workspaceIn(cleanups));
    const extra = typeof o.env === "function" ? o.env(base) : (o.env ?? {});
    const w: Workspace = { ...base, env: { ...base.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-loop", OPENAI_MODEL: "fake-model", ...extra } };
    if (o.globalYaml !== undefined) writeFileSync(join(w.home, "config", "sandbox.yaml"), o.globalYaml);
    if (o.projectYaml !== undefined) {
      mkdirSync(join(w.project, ".tau"), { recursive: true });
      writeFileSync(join(w.project, ".tau", "sandbox.yaml"), o.projectYaml);
    }
    if (o.trusted === true) writeFileSync(join(w.home, "config", "trusted-projects"), `${w.project}\n`);
    const d = await startDaemon(w.env, ["--project-root", w.project, ...(o.daemonArgs ?? [])]);
    cleanups.push(() => killTree(d.pid));
    const c = await TestClient.ui(d.socket, d.session_id);
    cleanups.push(() => c.close());
    c.send({ message: "subscribe", payload: { historical: ["harness.models_available", "sandbox.state_reported"], live: ["*"] } });
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "harness.models_available" && (m.payload.event.data.models as unknown[]).length > 0, 30_000);
    c.emit("ui.create_agent", { request_id: "r-agent" });
    const m = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === "r-agent");
    if (m.message !== "direct" || m.payload.event.data.ok !== true) throw new Error("agent not created");
    return new SandboxSession(w, d, c, String(m.payload.event.data.agent_id), fake);
  }

  /** A session started as `start` does, whose sandbox the test has checked became active. */
  static async active(fake: FakeOpenAI, cleanups: Array<() => void>, o: SandboxSessionOptions = {}): Promise<SandboxSession> {
    const s = await SandboxSession.start(fake, cleanups, o);
    expect(await s.settled()).toMatchObject({ state: "active" });
    return s;
  }

  /** Ends this session's daemon and its extensions (SIGKILL). */
  end(): void {
    this.client.close();
    killTree(this.daemon.pid);
  }

  /** A new folder `name` in the tau home: outside the project. */
  outsideDir(name = "outside"): string {
    const dir = join(this.w.home, name);
    mkdirSync(dir);
    return dir;
  }

  /** The user asks for `prompt`; the model calls `shell` (as `callId`) with `command`; `answers` come next (a classifier's review), then "noted". */
  promptShell(prompt: string, callId: string, command: string, answers: ScriptedResponse[] = []): void {
    this.fake.enqueue(toolCallResponse([{ id: callId, name: "shell", arguments: [JSON.stringify({ command })] }]), ...answers, textResponse("noted"));
    this.client.emit("ui.prompt_submit", { agent_id: this.agentId, mode: "queue", text: prompt });
  }

  /** Denies the next approval prompt once the test checked it asks for `callId`'s write to `target`, and that the call's result says the user refused; returns the prompt. */
  async denyWrite(callId: string, target: string): Promise<Record<string, unknown>> {
    const ask = await this.approval();
    expect(ask).toMatchObject({ kind: "filesystem_write", target, call_id: callId });
    this.answer(ask.approval_id, "deny");
    expect((await this.result(callId)).output).toContain("the user refused it");
    return ask;
  }

  /** The user asks for `prompt`; the model calls `shell` (as `callId`) with `command`, then `answers` and "noted"; resolves once the call started. */
  async startShell(prompt: string, callId: string, command: string, answers: ScriptedResponse[] = []): Promise<void> {
    this.promptShell(prompt, callId, command, answers);
    await this.next("tool.started", (d) => d.call_id === callId);
  }

  /** Has the model run `sleep 300` named `marker`; once it runs among the daemon's descendants, the daemon's process tree. */
  async sleeping(marker: string): Promise<number[]> {
    await this.callShell(`exec -a ${marker} sleep 300`);
    let tree: number[] = [];
    await waitFor(() => {
      tree = processTree(this.daemon.pid);
      return tree.some((p) => commandLine(p).startsWith(marker));
    }, "the sandboxed command to start");
    return tree;
  }

  /**
   * Ends this session's daemon (SIGKILL, its extensions too) and resumes the session in a new one,
   * attached as a UI that also reads the sandbox's state back.
   */
  async resume(cleanups: Array<() => void>): Promise<SandboxSession> {
    this.client.close();
    killTree(this.daemon.pid);
    const d = await startDaemon(this.w.env, ["--resume", this.daemon.session_id, "--project-root", this.w.project]);
    cleanups.push(() => killTree(d.pid));
    const c = await TestClient.ui(d.socket, d.session_id);
    cleanups.push(() => c.close());
    c.send({ message: "subscribe", payload: { historical: ["harness.models_available", "sandbox.state_reported"], live: ["*"] } });
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "harness.models_available" && (m.payload.event.data.models as unknown[]).length > 0, 30_000);
    const resumed = new SandboxSession(this.w, d, c, this.agentId, this.fake);
    // Call ids go on from this session's: the resumed agent's history holds them.
    resumed.calls = this.calls;
    return resumed;
  }

  /** The next delivered event named `name` (and matching `pred`), taken out of the inbox. */
  async next(name: string, pred: (d: Record<string, unknown>) => boolean = () => true, ms = 30_000): Promise<Record<string, unknown>> {
    const m = await this.client.next((x) => x.message === "deliver" && x.payload.event.name === name && pred(x.payload.event.data), ms, name);
    return m.message === "deliver" ? m.payload.event.data : {};
  }

  /** Waits for the sandbox to leave `pending`; its state report. */
  async settled(): Promise<Record<string, unknown>> {
    return this.next("sandbox.state_reported", (d) => d.state !== "pending");
  }

  /** Has the model call `shell` with `command`; resolves with the call id once the call started. */
  async callShell(command: string, timeoutSeconds?: number): Promise<string> {
    return this.callTool("shell", { command, ...(timeoutSeconds !== undefined ? { timeout_seconds: timeoutSeconds } : {}) });
  }

  /** Has the model call the tool `name` with `args`; resolves with the call id once the call started. */
  async callTool(name: string, args: Record<string, unknown>): Promise<string> {
    const callId = `call_sbx_${++this.calls}`;
    this.fake.enqueue(toolCallResponse([{ id: callId, name, arguments: [JSON.stringify(args)] }]), textResponse("noted"));
    this.client.emit("ui.prompt_submit", { agent_id: this.agentId, mode: "queue", text: `run ${callId}` });
    await this.next("tool.started", (d) => d.call_id === callId);
    return callId;
  }

  /** Has the model call the tool `name` with `args`, and returns its result. */
  async tool(name: string, args: Record<string, unknown>): Promise<{ outcome: string; output: string }> {
    const callId = `call_sbx_${++this.calls}`;
    this.fake.enqueue(toolCallResponse([{ id: callId, name, arguments: [JSON.stringify(args)] }]), textResponse("noted"));
    this.client.emit("ui.prompt_submit", { agent_id: this.agentId, mode: "queue", text: `run ${callId}` });
    return this.result(callId);
  }

  /** The `tool.result` of a call. */
  async result(callId: string, ms = 60_000): Promise<{ outcome: string; output: string }> {
    const r = await this.next("tool.result", (d) => d.call_id === callId, ms);
    await this.next("agent.outer_turn_finished", () => true, ms);
    return { outcome: String(r.outcome), output: String(r.output) };
  }

  /** Runs `command` as the model's `shell` call and returns its result, answering no prompt. */
  async shell(command: string): Promise<{ outcome: string; output: string }> {
    return this.result(await this.callShell(command));
  }

  /** The next approval prompt. */
  async approval(pred: (d: Record<string, unknown>) => boolean = () => true): Promise<Record<string, unknown>> {
    return this.next("sandbox.approval_requested", pred);
  }

  answer(approvalId: unknown, decision: string): void {
    this.client.emit("sandbox.approval_answer", { approval_id: String(approvalId), decision });
  }

  /** `:sandbox ARGS` as the interactive UI sends it; the extension's answer. */
  async command(...args: string[]): Promise<{ ok: boolean; text: string }> {
    const request_id = `sbx-cmd-${++this.commands}`;
    this.client.emit("sandbox.command_request", { request_id, args });
    const r = await this.next("sandbox.command_result", (d) => d.request_id === request_id);
    return { ok: r.ok === true, text: String(r.text) };
  }
}

/**
 * A loopback HTTP server standing in for a host outside the sandbox: it answers every request with
 * "hello from the host" and counts them (`hits`) and their paths (`paths`); closed after each test. `start({ ipv6: true })`
 * listens on `::1` too, at the same port. Call where tests are declared.
 */
export function useLoopbackHost(): { start(o?: { ipv6?: boolean }): Promise<number>; readonly hits: number; readonly paths: readonly string[] } {
  let servers: Server[] = [];
  let hits = 0;
  const paths: string[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    servers = [];
  });
  const listen = async (port: number, address: string): Promise<number> => {
    const s = createServer((req, res) => {
      hits++;
      paths.push(req.url ?? "");
      res.end("hello from the host\n");
    });
    servers.push(s);
    await new Promise<void>((r) => s.listen(port, address, () => r()));
    return (s.address() as AddressInfo).port;
  };
  return {
    get hits() {
      return hits;
    },
    get paths() {
      return paths;
    },
    async start(o = {}) {
      hits = 0;
      paths.length = 0;
      const port = await listen(0, "127.0.0.1");
      if (o.ipv6 === true) await listen(port, "::1");
      return port;
    },
  };
}
