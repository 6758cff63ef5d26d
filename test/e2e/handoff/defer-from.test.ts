// Where the deferral of the user's prompts begins (SPEC-handoff "Deferral window",
// `defer_prompts_from`): with `request`, a prompt typed before the agent answered the handoff is
// already held and reaches the replacement's first turn; by default (`writing`) it goes to the agent.
import { describe, expect, it } from "vitest";
import { waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { attach, command, createAgent, daemon, delivered, handoffWorkspace, kill, messages, runningSession, scriptHandoff } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

async function typedWhileRequested(deferFrom: "request" | "writing" | undefined): Promise<{ held: boolean; successor: string }> {
  const w = handoffWorkspace(fake, cleanups, deferFrom ? { defer_prompts_from: deferFrom } : {});
  let answer!: () => void;
  const call = new Promise<void>((r) => (answer = r));
  cleanups.push(() => answer());
  scriptHandoff(fake, { call });
  const d = await daemon(w.env, ["--project-root", w.project], cleanups);
  const c = await attach(d, cleanups);
  const agentId = await createAgent(c);
  expect((await command(c, agentId, "h1", "start")).ok).toBe(true);
  await delivered(c, "handoff.state_reported", (x) => x.phase === "requested");
  const from = c.deliveries().length;
  c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "typed before the agent answered" });
  await waitFor(() => c.deliveries().slice(from).some((x) => (x.name === "handoff.state_reported" && x.data.deferred === 1) || (x.name === "agent.prompt_submitted" && x.data.text === "typed before the agent answered")), "its acknowledgement", 30_000);
  const held = c.deliveries().slice(from).some((x) => x.name === "handoff.state_reported" && x.data.deferred === 1);
  answer();
  const successor = String((await delivered(c, "session.handed_off")).successor_session_id);
  const row = await runningSession(w.home, successor);
  cleanups.push(() => row && kill(row.pid));
  await waitFor(() => fake.chatRequests.some((r) => JSON.stringify(messages(r)).includes(`to session ${successor}`)), "the replacement's first turn", 30_000);
  return { held, successor };
}

const firstTurn = (successor: string) => String(messages(fake.chatRequests.find((r) => JSON.stringify(messages(r)).includes(`to session ${successor}`))!).find((m) => m.role === "user")!.content);

describe("defer_prompts_from", () => {
  it("[handoff.defer-from.request] with request, a prompt typed before the agent's answer is held and opens the replacement's work after the dossier", async () => {
    const { held, successor } = await typedWhileRequested("request");
    expect(held).toBe(true);
    expect(firstTurn(successor)).toContain("--- Deferred Prompt 1 of 1 ---\ntyped before the agent answered\n");
  }, 120_000);

  it("[handoff.defer-from.writing-default] by default, a prompt typed before the agent's answer goes to the agent, not the replacement", async () => {
    const { held, successor } = await typedWhileRequested(undefined);
    expect(held).toBe(false);
    expect(firstTurn(successor)).not.toContain("typed before the agent answered");
  }, 120_000);
});
