// Descriptor exhaustion refuses work and keeps the daemon alive (issue: an uncaught EMFILE from a
// lazily loaded validator killed the daemon, and the refusal given named an install path). A daemon
// held (prlimit) to four descriptors more than it has once started, with a model that makes every
// agent start five more: every turn ends, completed or stopped with a reason the user sees (journals
// share a bounded pool of descriptors and give one back when another needs it; validators are
// loaded ahead), the daemon stays up and serves on, and no message names a path of tau's installation. A validator that cannot be loaded fails that
// one call closed and loads on the next.
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { TestClient, isAlive, startDaemon, waitFor } from "../../support/daemon.js";
import { killTree, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse, type ReceivedRequest } from "../../support/fake-openai.js";
import { REPO_ROOT } from "../../support/paths.js";
import type { WireMessage } from "../../../generated/index.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

type Msg = { role: string; content?: unknown };
const messages = (r: ReceivedRequest): Msg[] => (r.body as { messages: Msg[] }).messages;

describe("descriptor exhaustion", () => {
  it("[agent-team.e2e.descriptors-exhausted] held to four descriptors above what it has while a model grows a 250-agent team, every turn ends (completed, or stopped with why), the daemon stays up, serves on once descriptors free, and names no install path", async () => {
    const { env, project } = workspaceIn(
      cleanups,
      JSON.stringify({
        model: "fake-model",
        agent_limits: { agents_per_session: 250, max_depth: 4, children_per_agent: 5, starts_per_minute: 10_000 },
        extensions: [{ name: "provider", kind: "provider", command: ["tau", "ext", "provider"], config: { profile: "chat_completions", base_url: fake.baseUrl, models: [{ id: "fake-model" }] }, startup_timeout_seconds: 30 }],
      }),
    );
    let n = 0;
    fake.respondWith((r) =>
      messages(r).some((m) => m.role === "assistant")
        ? textResponse("done")
        : toolCallResponse(Array.from({ length: 5 }, () => ({ id: `call_${++n}`, name: "agent_start", arguments: JSON.stringify({ task: "five more" }) }))),
    );
    // Its timeline says when every validator is loaded (the daemon does it once its session runs).
    const timeline = join(env.TAU_HOME as string, "timeline.log");
    const d = await startDaemon({ ...env, TAU_TIMELINE: timeline }, ["--project-root", project]);
    cleanups.push(() => killTree(d.pid));
    const c = await TestClient.ui(d.socket, d.session_id);
    cleanups.push(() => c.close());
    c.send({ message: "subscribe", payload: { historical: ["harness.models_available"], live: ["harness.models_available", "agent.outer_turn_finished", "agent.prompt_failed", "provider.response_failed", "harness.notice"] } });
    await c.next((m) => m.message === "deliver" && m.payload.event.name === "harness.models_available" && (m.payload.event.data.models as unknown[]).length > 0, 30_000);
    c.emit("ui.create_agent", { request_id: "r1", display_name: "lead" });
    const created = await c.next((x) => x.message === "direct" && x.payload.event.data.request_id === "r1");
    const lead = String((created as Extract<WireMessage, { message: "direct" }>).payload.event.data.agent_id);
    // The daemon alone (its extensions keep theirs) may now open only four descriptors more than it
    // holds, far fewer than the 250 agents' journals: they must make do with what the journal pool
    // gives back, and nothing may need a descriptor to validate an event.
    await waitFor(() => existsSync(timeline) && readFileSync(timeline, "utf8").includes(`${d.pid} daemon validators loaded`), "the daemon's validators loaded", 30_000);
    const held = readdirSync(`/proc/${d.pid}/fd`).length;
    const soft = /Max open files\s+(\d+)/.exec(readFileSync(`/proc/${d.pid}/limits`, "utf8"))?.[1] ?? "1024";
    const limitTo = (n: number) => {
      const set = spawnSync("prlimit", ["--pid", String(d.pid), `--nofile=${n}:`], { encoding: "utf8" });
      expect(set.status, set.stderr).toBe(0);
    };
    limitTo(held + 4);
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "go" });
    // Every agent's turn ends: completed, or stopped with why when its journal could get no
    // descriptor (a refusal the user sees), never left running. The daemon stays up.
    const end = await c.next((m) => m.message === "deliver" && m.payload.event.name === "agent.outer_turn_finished" && m.payload.event.data.agent_id === lead, 120_000, "the lead's turn's end");
    if (end.message === "deliver" && end.payload.event.data.outcome !== "completed") {
      const why = c.inbox.find((m) => m.message === "deliver" && m.payload.event.name === "agent.prompt_failed" && m.payload.event.data.agent_id === lead);
      expect(why?.message === "deliver" && String(why.payload.event.data.diagnostic)).toMatch(/could not (be )?record/);
    }
    const settled = async () => {
      c.send({ message: "ui_roster_request", payload: { request_id: "settled", include_unloaded: false, limit: 256 } });
      const page = await c.next((m) => m.message === "ui_roster_result" && m.payload.request_id === "settled", 30_000, "the roster");
      return page.message === "ui_roster_result" && page.payload.rows.every((r) => r.status !== "running" && r.status !== "queued");
    };
    await waitFor(settled, "every agent settled", 120_000);
    expect(isAlive(d.pid)).toBe(true);
    // Descriptors free again: the daemon serves, and a new prompt of the lead completes.
    limitTo(Number(soft));
    fake.respondWith(() => textResponse("still here"));
    c.send({ message: "ui_roster_request", payload: { request_id: "after", include_unloaded: false } });
    await c.next((m) => m.message === "ui_roster_result" && m.payload.request_id === "after", 30_000, "the roster");
    const told = fake.chatRequests.flatMap((r) => messages(r)).filter((m) => m.role === "tool").map((m) => String(m.content));
    for (const text of told) expect(text).not.toContain(REPO_ROOT);
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "are you there?" });
    const again = await c.next((m) => m.message === "deliver" && m.payload.event.name === "agent.outer_turn_finished" && m.payload.event.data.agent_id === lead, 60_000, "the next turn");
    expect(again.message === "deliver" && again.payload.event.data.outcome).toBe("completed");
  }, 240_000);

  it("[protocol.validators.load-failure-fails-closed] a validator whose file cannot be loaded (no descriptor left) fails that call closed, naming the schema and cause but no path, and loads on the next", () => {
    const script = `
      import { openSync, closeSync } from "node:fs";
      const v = await import(process.argv[1]);
      const fds = [];
      try { for (;;) fds.push(openSync("/dev/null", "r")); } catch (e) { if (e.code !== "EMFILE") throw e; }
      const first = v.validateAgentModelSet({ agent_id: "a-1", model: "m" });
      const errors = v.validateAgentModelSet.errors;
      for (const fd of fds) closeSync(fd);
      const second = v.validateAgentModelSet({ agent_id: "a-1", model: "m" });
      console.log(JSON.stringify({ first, errors, second }));`;
    const r = spawnSync("bash", ["-c", `ulimit -n 64 && exec "$0" --input-type=module -e "$1" "$2"`, process.execPath, script, join(REPO_ROOT, "generated", "validators.js")], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    const out = JSON.parse(r.stdout) as { first: boolean; errors: Array<{ message: string }>; second: boolean };
    expect(out.first).toBe(false);
    expect(out.errors[0]?.message).toBe("the AgentModelSet validator could not be loaded (EMFILE); nothing was accepted");
    expect(out.second).toBe(true);
  });
});
