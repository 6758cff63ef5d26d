// Ephemeral state leaves nothing behind: an ephemeral agent has no journal file and no debug-log
// rows, a `!!` command's route has no debug-log rows even when an interceptor swaps it, and an agent
// whose creation fails is answered and let go with its journal closed.
import { afterEach, describe, expect, it } from "vitest";
import { existsSync, readFileSync, readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { HarnessKit, until } from "../../support/harness-kit.js";
import { debugLogPath } from "../../../handwritten/store/index.js";

const kits: HarnessKit[] = [];
afterEach(async () => {
  while (kits.length) await kits.pop()?.close();
});

async function kit(): Promise<HarnessKit> {
  const k = await HarnessKit.open({ debugLog: true });
  kits.push(k);
  return k;
}

function debugLines(k: HarnessKit): string[] {
  const file = debugLogPath(k.stateDir as string, k.h.sessionId);
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

function openFds(): string[] {
  return readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return [];
    }
  });
}

describe("ephemeral agents", () => {
  it("[agent.ephemeral.no-journal-no-debug-rows] an ephemeral agent's work leaves no journal, no session record and no debug-log row", async () => {
    const k = await kit();
    const tools = k.extension("tools", "tool");
    await tools.emit("tool.registration_declared", { name: "echo", description: "echo", parameters: { type: "object" } });
    const p = k.extension("llm", "provider");
    await p.emit("provider.models_declared", { models: [{ id: "m1" }] });
    await until(() => k.h.tools.tools.has("echo") && k.committed("harness.models_available").length > 0);
    const kept = await k.createAgent();
    const eph = await k.createAgent({ ephemeral: true });
    for (const agent of [eph, kept]) {
      const before = p.directed("provider.request").length;
      await k.h.bus.publish({ name: "ui.prompt_submit", data: { agent_id: agent, mode: "queue", text: "hi" } }, k.ui.publisher);
      await until(() => p.directed("provider.request").length > before);
      const req = p.directed("provider.request")[before] as { prompt_id: string };
      await p.emit("provider.response_finished_reported", { prompt_id: req.prompt_id, round: 0, model: "m1", text: "", tool_calls: [{ call_id: `c-${agent}`, tool: "echo", arguments_json: "{}" }], finish_reason: "tool_calls" });
      await until(() => k.committed("tool.started", (d) => d.agent_id === agent).length === 1);
      await tools.emit("tool.progress_reported", { call_id: `c-${agent}`, text: "working" });
      await tools.emit("tool.result_reported", { call_id: `c-${agent}`, output: "out" });
      await until(() => p.directed("provider.request").length > before + 1);
      await p.emit("provider.response_finished_reported", { prompt_id: req.prompt_id, round: 1, model: "m1", text: "done", tool_calls: [], finish_reason: "stop" });
      await until(() => k.committed("agent.outer_turn_finished", (d) => d.agent_id === agent).length === 1);
    }
    // The kept agent's rows are written (the mirror works), and none names the ephemeral agent or its call.
    await until(() => debugLines(k).some((l) => l.includes(`"c-${kept}"`) && l.includes("tool.result_reported")), "the kept agent's rows");
    expect(debugLines(k).filter((l) => l.includes(eph)).map((l) => l.slice(0, 300))).toEqual([]);
    expect(debugLines(k).some((l) => l.includes("provider.response_finished_reported"))).toBe(true);
    expect(existsSync(join(k.stateDir as string, "agents", eph))).toBe(false);
    expect(existsSync(join(k.stateDir as string, "agents", kept, "events.cbor"))).toBe(true);
    for (const f of ["events.cbor", "restore-events.cbor"]) {
      const file = join(k.stateDir as string, "sessions", k.h.sessionId, f);
      expect(readFileSync(file).includes(Buffer.from(eph)), f).toBe(false);
    }
    // Its transcript is real for its own turns while the daemon lives.
    expect(k.h.agents.get(eph)?.log.readAll().map((r) => r.event.name)).toContain("provider.tool_result");
  });

  it("[shell.ephemeral-route.no-debug-rows] a !! command's route leaves no debug-log row, even when an interceptor swaps its route", async () => {
    const k = await kit();
    const shell = k.extension("shell", "tool");
    await shell.emit("tool.registration_declared", { name: "shell", description: "shell", parameters: { type: "object" } });
    await until(() => k.h.tools.tools.has("shell"));
    const agent = await k.createAgent();
    k.h.bus.addInterceptor(55, {
      selectors: ["shell.command_request"],
      priority: 0,
      intercept: (id, event) => {
        const swapped = event.data.request_id === "u-quiet" ? { ...event.data, request_id: "u-swapped", include_in_context: true } : event.data;
        queueMicrotask(() => k.h.bus.reply(55, id, { action: "replace", replacement: { name: event.name, data: swapped } }));
      },
    });
    await k.h.bus.publish({ name: "shell.command_request", data: { agent_id: agent, request_id: "u-quiet", command: "echo secret-ish", include_in_context: false } }, k.ui.publisher);
    await k.h.bus.publish({ name: "shell.command_request", data: { agent_id: agent, request_id: "u-loud", command: "echo visible", include_in_context: true } }, k.ui.publisher);
    await until(() => k.committed("shell.command_started").length === 2);
    for (const id of ["u-swapped", "u-loud"]) {
      await shell.emit("shell.command_progress_reported", { request_id: id, text: "..." });
      await shell.emit("shell.command_finished_reported", { request_id: id, output: "out", exit_code: 0 });
    }
    await until(() => k.committed("shell.command_finished").length === 2);
    await until(() => debugLines(k).some((l) => l.includes("u-loud") && l.includes("shell.command_finished\"")), "the !cmd's rows");
    expect(debugLines(k).filter((l) => l.includes("u-loud")).map((l) => (JSON.parse(l) as { name: string }).name)).toEqual([
      "shell.command_request",
      "shell.command_started",
      "shell.command_progress_reported",
      "shell.command_progress",
      "shell.command_finished_reported",
      "shell.command_finished",
    ]);
    expect(debugLines(k).filter((l) => l.includes("u-quiet") || l.includes("u-swapped") || l.includes("secret-ish"))).toEqual([]);
  });
});

describe("agent creation", () => {
  it("[agent.create.always-answers] a creation whose membership cannot be recorded is refused to the requester, and its journal is closed", async () => {
    const k = await kit();
    const sessionLog = (k.h as unknown as { sessionLog: { append: (i: { event: { name: string } }) => unknown } }).sessionLog;
    const append = sessionLog.append.bind(sessionLog);
    sessionLog.append = (input) => {
      if (input.event.name === "session.agent_loaded") throw new Error("disk full");
      return append(input);
    };
    // This kit's agent journals only: an earlier test's kit may still be closing its own.
    // The write-back worker opens descriptors of its own while it syncs: counted once it is idle.
    const writeback = (k.h as unknown as { writeback: { flush(timeoutMs: number): Promise<boolean> } }).writeback;
    const agentFds = async () => {
      expect(await writeback.flush(10_000)).toBe(true);
      return openFds().filter((p) => p.startsWith(k.stateDir as string) && p.includes("/agents/")).length;
    };
    const fdsBefore = await agentFds();
    await expect(k.createAgent()).rejects.toThrow("could not record the agent in the session");
    expect(k.h.agents.size).toBe(0);
    expect(await agentFds()).toBe(fdsBefore);
    sessionLog.append = append;
    const agent = await k.createAgent();
    expect(k.h.agents.has(agent)).toBe(true);
  });
});
