// A chain of handoffs (SPEC-handoff "Flow"): the replacement session hands off again. Real daemons,
// the loopback model: session 1 → session 2 → session 3, each linked to the one before, each
// replacement's first turn naming its own source and carrying the prompts deferred there.
import { describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { runTau } from "../../support/run-tau.js";
import { textResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import type { TestClient } from "../../support/daemon.js";
import { attach, command, createAgent, daemon, delivered, handoffWorkspace, kill, messages, runningSession, scriptHandoff } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

/** Hands `agentId` off with one prompt typed into the window; answers the replacement's session id. */
async function handOff(c: TestClient, agentId: string, typed: string): Promise<string> {
  expect((await command(c, agentId, `start-${agentId}`, "start")).ok).toBe(true);
  await delivered(c, "handoff.state_reported", (x) => x.agent_id === agentId && x.phase === "writing");
  c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: typed });
  await delivered(c, "handoff.state_reported", (x) => x.agent_id === agentId && x.deferred === 1);
  gates.shift()?.();
  return String((await delivered(c, "session.handed_off", (x) => x.agent_id === agentId)).successor_session_id);
}

const gates: Array<() => void> = [];

describe("a chain of handoffs", () => {
  it("[handoff.chain.two] a replacement hands off again: three sessions linked in a chain, each first turn from its own source with its own deferred prompt", async () => {
    const w = handoffWorkspace(fake, cleanups);
    // Each retrieval's answer is held until the test typed its deferred prompt.
    let calls = 0;
    const held = [0, 1].map(() => new Promise<void>((r) => gates.push(r)));
    cleanups.push(() => gates.splice(0).forEach((g) => g()));
    scriptHandoff(fake, { afterTemplate: () => held[Math.min(calls++, 1)]! });
    const d1 = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c1 = await attach(d1, cleanups);
    const a1 = await createAgent(c1);
    const s2 = await handOff(c1, a1, "typed in session one");

    let row2: Awaited<ReturnType<typeof runningSession>>;
    await waitFor(async () => (row2 = await runningSession(w.home, s2)) !== undefined, "session two's daemon", 30_000);
    cleanups.push(() => kill(row2!.pid));
    const c2 = await attach(row2!, cleanups);
    let a2: string | undefined;
    await waitFor(() => (a2 = readdirSync(join(w.home, "state", "agents")).find((a) => a !== a1)) !== undefined, "session two's agent", 30_000);
    await waitFor(() => fake.chatRequests.some((r) => JSON.stringify(messages(r)).includes(`to session ${s2}`)), "session two's first turn", 30_000);
    const s3 = await handOff(c2, a2!, "typed in session two");
    let row3: Awaited<ReturnType<typeof runningSession>>;
    await waitFor(async () => (row3 = await runningSession(w.home, s3)) !== undefined, "session three's daemon", 30_000);
    cleanups.push(() => kill(row3!.pid));

    const firstTurn = (s: string) => {
      const r = fake.chatRequests.find((q) => JSON.stringify(messages(q)).includes(`to session ${s}`) && messages(q).filter((m) => m.role === "user").length === 1);
      return r ? String(messages(r).find((m) => m.role === "user")!.content) : undefined;
    };
    await waitFor(() => firstTurn(s3) !== undefined, "session three's first turn", 30_000);
    expect(firstTurn(s2)).toContain(`# Handoff from session ${d1.session_id} to session ${s2}`);
    expect(firstTurn(s2)).toContain("--- Deferred Prompt 1 of 1 ---\ntyped in session one\n");
    expect(firstTurn(s3)).toContain(`# Handoff from session ${s2} to session ${s3}`);
    expect(firstTurn(s3)).toContain("--- Deferred Prompt 1 of 1 ---\ntyped in session two\n");
    expect(firstTurn(s3)).not.toContain("typed in session one");

    await waitFor(async () => {
      const r = await runTau(["session", "list", "--all", "--json"], { env: w.env });
      const rows = JSON.parse(r.stdout) as Array<{ session_id: string; parent: string | null; successor: string | null }>;
      const by = (s: string) => rows.find((x) => x.session_id === s);
      return by(s2)?.parent === d1.session_id && by(s3)?.parent === s2 && by(d1.session_id)?.successor === s2 && by(s2)?.successor === s3;
    }, "the chain in the listing", 15_000);
  }, 180_000);
});
