// An idle agent holds no descriptor (issue: descriptors held per idle agent must be 0, journals
// opened on demand): a lead starts twelve children that each answer; once every one is idle, no
// descriptor of the daemon names an agent's journal — and none does after a resume either, while
// a prompt to one of them still runs and ends.
import { readdirSync, readlinkSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isAlive, waitFor } from "../../support/daemon.js";
import { agentHarnessYaml, attachUi, daemonIn, killTree, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse, type ReceivedRequest } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const CHILDREN = 12;

/** The daemon's descriptors that name a file in an agent's journal folder. */
function agentJournalDescriptors(pid: number): string[] {
  const held: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (/\/agents\/[^/]+\//.test(target)) held.push(target);
    } catch {
      // closed while listing
    }
  }
  return held;
}

type Msg = { role: string };
const answered = (r: ReceivedRequest) => (r.body as { messages: Msg[] }).messages.some((m) => m.role === "assistant" || m.role === "tool");

describe("idle agents hold no descriptor", () => {
  it("[journal.descriptors.idle-agent-holds-none] after twelve children answered, and after a resume, no descriptor of the daemon names an agent journal; a prompt still runs", async () => {
    const { env, project } = workspaceIn(cleanups, agentHarnessYaml(fake));
    let n = 0;
    let first = true;
    fake.respondWith((r) => {
      if (first && !answered(r)) {
        first = false;
        return toolCallResponse(Array.from({ length: CHILDREN }, () => ({ id: `call_${++n}`, name: "agent_start", arguments: JSON.stringify({ task: "say done" }) })));
      }
      return textResponse("done");
    });
    const d = await daemonIn(cleanups, env, ["--project-root", project]);
    const c = await attachUi(cleanups, d);
    const lead = await c.createAgent("r1", { display_name: "lead" });
    c.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "start twelve" });
    await c.next((x) => x.message === "deliver" && x.payload.event.name === "agent.outer_turn_finished" && x.payload.event.data.agent_id === lead, 60_000);
    await waitFor(async () => {
      const rows = (await c.roster()).rows;
      return rows.length === CHILDREN + 1 && rows.every((r) => r.status === "idle");
    }, "every agent idle", 60_000);
    // Journals are given back as each agent goes idle; a turn's last record may still be landing.
    await waitFor(() => agentJournalDescriptors(d.pid).length === 0, "no agent journal held", { timeoutMs: 5_000, detail: () => agentJournalDescriptors(d.pid).join(", ") });
    c.close();
    killTree(d.pid);
    await waitFor(() => !isAlive(d.pid), "gone", 10_000);

    const d2 = await daemonIn(cleanups, env, ["--resume", d.session_id, "--project-root", project]);
    const c2 = await attachUi(cleanups, d2);
    expect((await c2.roster()).rows.length).toBe(CHILDREN + 1);
    expect(agentJournalDescriptors(d2.pid)).toEqual([]);
    c2.emit("ui.prompt_submit", { agent_id: lead, mode: "queue", text: "again" });
    const end = await c2.next((x) => x.message === "deliver" && x.payload.event.name === "agent.outer_turn_finished" && x.payload.replay !== true, 60_000);
    expect(end.message === "deliver" && end.payload.event.data.outcome).toBe("completed");
    await waitFor(() => agentJournalDescriptors(d2.pid).length === 0, "no agent journal held after the prompt", { timeoutMs: 5_000, detail: () => agentJournalDescriptors(d2.pid).join(", ") });
  }, 120_000);
});
