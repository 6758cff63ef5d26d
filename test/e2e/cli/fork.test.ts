// Forks of saved sessions (SPEC-session-lifecycle, "Forks"), through the real launcher, daemon and
// provider extension against a loopback model server: `tau session fork`, `tau run --fork` and the
// terminal UI's `:fork` each continue a copy of the agent's conversation in a new session, which the
// model is sent whole, while the source session's files stay byte for byte as they were.
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTau } from "../../support/run-tau.js";
import { waitForOwnedDaemons } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { has, startTau, tuiWorkspace } from "../../support/pty.js";
import { textResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { exitCodeOf } from "../../../handwritten/cli/errors.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

type Msg = { role: string; content?: unknown };
/** The conversation request `i` carried, without its system prompt. */
const conversation = (i: number) =>
  (fake.chatRequests[i]?.body as { messages: Msg[] }).messages.filter((m) => m.role !== "system").map((m) => [m.role, String(m.content)]);

const sessionsOf = (w: Workspace) => readdirSync(join(w.home, "state", "sessions")).filter((n) => n.startsWith("s-"));
const agentsOf = (w: Workspace) => readdirSync(join(w.home, "state", "agents")).filter((n) => n.startsWith("a-"));

/** A digest of every journal and checkpoint of a session and its agents: what "left as it was" compares. */
function sessionDigest(w: Workspace, sessionId: string, agents: readonly string[]): string {
  const h = createHash("sha256");
  const files = [
    ...["events.cbor", "meta.json"].map((f) => join(w.home, "state", "sessions", sessionId, f)),
    ...agents.flatMap((a) => ["events.cbor", "meta.json"].map((f) => join(w.home, "state", "agents", a, f))),
  ];
  for (const f of files) h.update(f).update(readFileSync(f));
  return h.digest("hex");
}

function env(w: Workspace): NodeJS.ProcessEnv {
  return { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-x", OPENAI_MODEL: "fake-model" };
}

describe("forks of saved sessions", () => {
  it("[sessions.fork.copies-conversation] tau session fork makes a new session whose agent continues the conversation; the source is unchanged and continues on its own", async () => {
    const w = workspaceIn(cleanups);
    fake.enqueue(textResponse("noted: kiwi"), textResponse("the word was kiwi"), textResponse("source still knows kiwi"));
    expect((await runTau(["run", "remember the word kiwi"], { env: env(w), cwd: w.project })).code).toBe(0);
    waitForOwnedDaemons(w.home);
    const [source] = sessionsOf(w) as [string];
    const [sourceAgent] = agentsOf(w) as [string];
    const before = sessionDigest(w, source, [sourceAgent]);

    const forked = await runTau(["session", "fork", source.slice(0, 10), "--json"], { env: env(w) });
    expect(forked.code, forked.stderr).toBe(0);
    const f = JSON.parse(forked.stdout) as { session_id: string; agent_id: string; from_session_id: string; from_agent_id: string; copied_records: number; title: string };
    expect(f).toMatchObject({ from_session_id: source, from_agent_id: sourceAgent, title: "remember the word kiwi" });
    expect(f.session_id).not.toBe(source);
    expect(f.agent_id).not.toBe(sourceAgent);
    expect(sessionDigest(w, source, [sourceAgent])).toBe(before);

    // The listing shows the fork, with its source and title.
    const list = JSON.parse((await runTau(["session", "list", "--all", "--json"], { env: env(w) })).stdout) as Array<{ session_id: string; title: string | null; forked_from: string | null }>;
    expect(list.find((r) => r.session_id === f.session_id)).toMatchObject({ title: "remember the word kiwi", forked_from: source });
    expect(list.find((r) => r.session_id === source)).toMatchObject({ forked_from: null });

    const next = await runTau(["run", "--resume", f.session_id, "which word?"], { env: env(w), cwd: w.project });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toBe("the word was kiwi\n");
    expect(conversation(1)).toEqual([
      ["user", "<user>\nremember the word kiwi\n</user>"],
      ["assistant", "noted: kiwi"],
      ["user", "<user>\nwhich word?\n</user>"],
    ]);
    waitForOwnedDaemons(w.home);
    // The fork's prompt went to the fork's agent: the source's files are as they were, and no third agent was made.
    expect(sessionDigest(w, source, [sourceAgent])).toBe(before);
    expect(agentsOf(w).sort()).toEqual([sourceAgent, f.agent_id].sort());

    // The source continues without the fork's turn.
    const again = await runTau(["run", "--resume", source, "and now?"], { env: env(w), cwd: w.project });
    expect(again.code, again.stderr).toBe(0);
    expect(conversation(2).map(([, text]) => text)).toEqual(["<user>\nremember the word kiwi\n</user>", "noted: kiwi", "<user>\nand now?\n</user>"]);
  });

  it("[sessions.fork.cli-run] tau run --continue --fork continues a new copy and the next --continue goes on in it; --fork alone is refused", async () => {
    const w = workspaceIn(cleanups);
    fake.enqueue(textResponse("first answer"), textResponse("fork answer"), textResponse("fork again"));
    expect((await runTau(["run", "first question"], { env: env(w), cwd: w.project })).code).toBe(0);
    waitForOwnedDaemons(w.home);
    const [source] = sessionsOf(w) as [string];

    const alone = await runTau(["run", "--fork", "x"], { env: env(w), cwd: w.project });
    expect([alone.code, alone.stdout]).toEqual([exitCodeOf("TAU-E0101"), ""]);
    expect(alone.stderr).toContain("--fork copies a saved session: give it with --continue or --resume ID");

    const forked = await runTau(["run", "--continue", "--fork", "--json", "second question"], { env: env(w), cwd: w.project });
    expect(forked.code, forked.stderr).toBe(0);
    const first = JSON.parse(forked.stdout.split("\n")[0] as string) as { event: string; data: { session_id: string } };
    expect(first.event).toBe("agent.started");
    const forkId = first.data.session_id;
    expect(forkId).not.toBe(source);
    expect(sessionsOf(w).sort()).toEqual([source, forkId].sort());
    expect(conversation(1).map(([, text]) => text)).toEqual(["<user>\nfirst question\n</user>", "first answer", "<user>\nsecond question\n</user>"]);
    waitForOwnedDaemons(w.home);

    // --continue now takes the fork (the folder's most recently active session).
    const cont = await runTau(["run", "--continue", "third question"], { env: env(w), cwd: w.project });
    expect(cont.code, cont.stderr).toBe(0);
    expect(conversation(2).map(([, text]) => text)).toEqual([
      "<user>\nfirst question\n</user>",
      "first answer",
      "<user>\nsecond question\n</user>",
      "fork answer",
      "<user>\nthird question\n</user>",
    ]);
    expect(sessionsOf(w)).toHaveLength(2);
  });

  it("[sessions.fork.tui] :fork in the terminal UI continues the conversation in a new session, says so, and the source keeps its own", async () => {
    const w = tuiWorkspace(workspaceIn(cleanups), fake);
    fake.enqueue(textResponse("noted: plum"));
    const t = startTau(cleanups, w, [], { cols: 100, rows: 30 });
    await t.waitFor(has(" · ready"), "ready");
    t.type("remember the word plum\r");
    await t.waitFor(has("noted: plum"), "the answer");
    await t.waitFor(has(" · ready"), "ready again");
    const source = sessionsOf(w)[0] as string;
    t.type(":fork\r");
    await t.waitFor(has(`a fork of ${source}`), "the fork's notice");
    await t.waitFor(has(" · ready"), "the fork ready");
    fake.enqueue(textResponse("the word was plum"));
    t.type("which word?\r");
    await t.waitFor(has("the word was plum"), "the fork's answer");
    expect(conversation(1).map(([, text]) => text)).toEqual(["<user>\nremember the word plum\n</user>", "noted: plum", "<user>\nwhich word?\n</user>"]);
    t.type(":quit\r");
    expect((await t.exited).exitCode).toBe(0);
    waitForOwnedDaemons(w.home);
    const sessions = sessionsOf(w);
    expect(sessions).toHaveLength(2);
    // The source has its one turn; the fork has both.
    const list = JSON.parse((await runTau(["session", "list", "--all", "--json"], { env: w.env })).stdout) as Array<{ session_id: string; forked_from: string | null }>;
    const fork = list.find((r) => r.forked_from === source);
    expect(fork).toBeDefined();
    const stats = (id: string) => runTau(["session", "stats", id, "--json"], { env: w.env }).then((r) => JSON.parse(r.stdout) as { turns: { completed: number } });
    const [s, k] = await Promise.all([stats(source), stats((fork as { session_id: string }).session_id)]);
    expect([s.turns.completed, k.turns.completed]).toEqual([1, 2]);
  });
});
