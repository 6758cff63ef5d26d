// Session handoff end to end (SPEC-handoff, GATE-handoff): `:handoff` → the request → the template
// retrieved (the dossier file reserved, a Finish id) → two prompts typed in the deferral window → the
// model writes the dossier with its usual `write` tool and finishes → once idle, the replacement
// session, linked, whose first user turn names the dossier file and holds both prompts in order.
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { runTau } from "../../support/run-tau.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { attach, command, createAgent, daemon, delivered, handoffWorkspace, kill, messages, runningSession, scriptHandoff, toolNames } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

describe("session handoff through real daemons", () => {
  it("[handoff.e2e.two-deferred-prompts] start → template retrieved → two deferred prompts → dossier written with the usual tools → Finish → a linked replacement whose first turn is the dossier file's path with its instructions and both prompts in order", async () => {
    const w = handoffWorkspace(fake, cleanups);
    let release!: () => void;
    scriptHandoff(fake, { afterTemplate: new Promise<void>((r) => (release = r)) });
    const d = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c = await attach(d, cleanups);
    const agentId = await createAgent(c);
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "first, some work" });
    await delivered(c, "agent.outer_turn_finished", (x) => x.outcome === "completed");

    const started = await command(c, agentId, "h1", "start");
    expect(started.ok).toBe(true);
    // The template retrieved: the window is open while the model's next answer is held, and the
    // dossier file is reserved, empty, 0600 in a .tau/ made 0700.
    await delivered(c, "handoff.state_reported", (x) => x.phase === "writing");
    const file = join(w.project, ".tau", `handoff_${d.session_id}.md`);
    expect(statSync(file).size).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(w.project, ".tau")).mode & 0o777).toBe(0o700);
    const first = "deferred one: please also update the README\n  (indented line kept)";
    const second = "deferred two: --- Deferred Prompt 1 of 1 --- is just text here";
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: first });
    await delivered(c, "handoff.state_reported", (x) => x.deferred === 1);
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: second });
    await delivered(c, "handoff.state_reported", (x) => x.deferred === 2);
    // Written to the recovery file before it was taken.
    const recovery = join(w.home, "config", "handoff", "recovery", `recovery-${d.session_id}.md`);
    const held = readFileSync(recovery, "utf8");
    expect(held).toContain(`--- Deferred Prompt 1 of 2 ---\n${first}\n--- Deferred Prompt 2 of 2 ---\n${second}\n`);
    release();

    const handedOff = await delivered(c, "session.handed_off");
    const successor = String(handedOff.successor_session_id);
    // No tool was restricted or swapped: the request after the retrieval offered the agent's usual tools.
    const writing = fake.chatRequests.find((r) => messages(r).at(-1)?.role === "tool" && JSON.stringify(messages(r).at(-1)).includes("Finish id:"))!;
    expect(toolNames(writing)).toEqual(expect.arrayContaining(["write", "read", "shell", "session_handoff_get_template", "session_handoff_finish"]));
    // The deferred prompts never reached the source agent as prompts.
    expect(fake.chatRequests.some((r) => JSON.stringify(messages(r).slice(-1)).includes("deferred one") && !JSON.stringify(messages(r).at(-1)).includes("# Handoff"))).toBe(false);

    // The replacement runs; its first user turn is the dossier and both prompts, in order.
    let row: Awaited<ReturnType<typeof runningSession>>;
    await waitFor(async () => (row = await runningSession(w.home, successor)) !== undefined, "the replacement daemon", 30_000);
    cleanups.push(() => kill(row!.pid));
    // The replacement took its dossier before the source recorded the handoff, so its first turn may
    // be over before this UI attaches: the model's requests show it.
    await attach(row!, cleanups);
    await waitFor(() => fake.chatRequests.some((r) => JSON.stringify(messages(r)).includes("# Handoff from session")), "the replacement's first request", 30_000);
    const firstTurn = fake.chatRequests.find((r) => JSON.stringify(messages(r)).includes("# Handoff from session"))!;
    const user = messages(firstTurn).filter((m) => m.role === "user");
    expect(user).toHaveLength(1);
    const dossier = String(user[0]!.content);
    expect(dossier.split("\n").find((l) => l.includes("# Handoff"))).toBe(`# Handoff from session ${d.session_id} to session ${successor}`);
    // The dossier file's absolute path and how to take it in and clean it up, never its text.
    const at = dossier.indexOf(`\n${file}\n`);
    expect(at).toBeGreaterThan(0);
    expect(dossier).toContain("delete exactly that file and nothing else");
    expect(dossier).not.toContain("DOSSIER-BODY");
    const i1 = dossier.indexOf(`--- Deferred Prompt 1 of 2 ---\n${first}\n`);
    const i2 = dossier.indexOf(`--- Deferred Prompt 2 of 2 ---\n${second}\n`);
    expect(i1).toBeGreaterThan(at);
    expect(i2).toBeGreaterThan(i1);
    // The recovery file is gone; the project's dossier file holds what the model wrote.
    await waitFor(() => !existsSync(recovery), "the recovery file's removal", 10_000);
    expect(readFileSync(file, "utf8")).toBe("DOSSIER-BODY: the goal, the state, the next steps.\n");

    // Lineage in `tau session list --all` and its JSON.
    await waitFor(async () => {
      const r = await runTau(["session", "list", "--all", "--json"], { env: w.env });
      const rows = JSON.parse(r.stdout) as Array<{ session_id: string; parent: string | null; successor: string | null }>;
      return rows.find((x) => x.session_id === successor)?.parent === d.session_id && rows.find((x) => x.session_id === d.session_id)?.successor === successor;
    }, "the lineage in the listing", 15_000);
    const table = await runTau(["session", "list", "--all"], { env: w.env });
    expect(table.stdout).toContain(`from ${d.session_id}`);
    expect(table.stdout).toContain(`to ${successor}`);
  }, 180_000);
});
