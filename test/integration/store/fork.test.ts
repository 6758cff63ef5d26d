// Forks of saved sessions at the storage level (SPEC-session-lifecycle, "Forks"), on real journal
// files: a running source (its writer holding the lock) is copied only up to the end of its last
// finished unit of work; refusals write nothing; and a forking process killed at any point leaves
// either the whole fork or no session, with what it left removed by the next fork.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { journalPath, openFileStateStore, replayJournal, validateJournalRecord, type EventLog, type JournalRecord, type StateStore } from "../../../handwritten/store/index.js";
import { FORKS_DIR, SessionCatalogError, SessionSummaryFold, forkSession, listSavedSessions } from "../../../handwritten/sessions/index.js";

const dirs: string[] = [];
const stores: StateStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function stateDir(): string {
  const d = mkdtempSync(join(tmpdir(), "tau-fork-"));
  dirs.push(d);
  return d;
}

const SESSION = "s-source-1";
const AGENT = "a-source-1";

interface Source {
  store: StateStore;
  agent: EventLog;
  /** Appends one finished turn: prompt, start, answer, end. */
  turn(prompt: string, answer: string): void;
}

/** A session with one agent, written through the real store (its writer locks held until closed). */
function source(state: string, o: { summary?: boolean; ephemeral?: boolean } = {}): Source {
  const store = openFileStateStore({ stateDir: state });
  stores.push(store);
  const session = store.openSession(SESSION);
  const fold = new SessionSummaryFold("/project");
  for (const event of [
    { name: "session.started", data: { session_id: SESSION, project_root: "/project", resumed: false, ephemeral: false } },
    { name: "session.agent_loaded", data: { agent_id: AGENT } },
    { name: "session.title_set", data: { title: "the source", origin: "first_prompt" } },
  ]) {
    const r = session.append({ event, source: { class: "harness" } });
    fold.fold(event.name, event.data, r.recorded_at);
  }
  if (o.summary !== false) session.checkpoint(fold.value(Date.now() * 1000) as unknown as Record<string, unknown>);
  const agent = store.openAgent(AGENT);
  agent.append({ event: { name: "agent.started", data: { agent_id: AGENT, session_id: SESSION, creator: "ui", cwd: "/project", ephemeral: o.ephemeral === true, role: "coder" } }, source: { class: "harness" } });
  let n = 0;
  const turn = (prompt: string, answer: string) => {
    const p = `p-turn-${++n}`;
    submit(agent, p, prompt);
    start(agent, p);
    agent.append({ event: { name: "provider.response_finished", data: { agent_id: AGENT, prompt_id: p, round: 0, model: "m", text: answer, tool_calls: [], finish_reason: "stop" } }, source: { class: "harness" } });
    agent.append({ event: { name: "agent.outer_turn_finished", data: { agent_id: AGENT, prompt_id: p, outcome: "completed", rounds: 1 } }, source: { class: "harness" } });
  };
  return { store, agent, turn };
}

const submit = (log: EventLog, p: string, text: string) =>
  log.append({ event: { name: "agent.prompt_submitted", data: { agent_id: AGENT, prompt_id: p, source: "human_ui", mode: "queue", text } }, source: { class: "harness" } });
const start = (log: EventLog, p: string) => log.append({ event: { name: "agent.prompt_started", data: { agent_id: AGENT, prompt_id: p, round: 0, model: "m" } }, source: { class: "harness" } });

const records = (file: string) => replayJournal<JournalRecord>(file, { validate: validateJournalRecord }).records;
const sessionIds = (state: string) => readdirSync(join(state, "sessions"));
const agentIds = (state: string) => readdirSync(join(state, "agents"));

describe("forks at the storage level", () => {
  it("[sessions.fork.running-source-at-last-turn] a source whose writer is running is copied up to its last finished turn, ids replaced, order, parents and times kept; a compaction inside a turn is no cut", async () => {
    const state = stateDir();
    const s = source(state);
    s.turn("first", "one");
    s.turn("second", "two");
    // A third turn in progress, with a compaction committed inside it and a prompt queued behind it.
    submit(s.agent, "p-open", "third");
    start(s.agent, "p-open");
    s.agent.append({ event: { name: "agent.compaction_committed", data: { agent_id: AGENT, compaction_id: "c-1", cut_seq: 3 } }, source: { class: "harness" } });
    submit(s.agent, "p-queued", "fourth");
    const sourceRecords = records(journalPath(state, "agent", AGENT));

    const f = forkSession(state, SESSION);
    expect(f).toMatchObject({ from_session_id: SESSION, from_agent_id: AGENT, copied_records: 9, left_out: 4, title: "the source" });
    const copy = records(journalPath(state, "agent", f.agent_id));
    expect(copy).toHaveLength(9);
    expect(copy[0]?.event).toEqual({ name: "agent.started", data: { agent_id: f.agent_id, session_id: f.session_id, creator: "ui", cwd: "/project", ephemeral: false, role: "coder" } });
    copy.slice(1).forEach((r, i) => {
      const was = sourceRecords[i + 1] as JournalRecord;
      expect([r.seq, r.parent, r.recorded_at, r.source, r.event.name]).toEqual([was.seq, was.parent, was.recorded_at, was.source, was.event.name]);
      expect(r.event.data).toEqual({ ...was.event.data, agent_id: f.agent_id });
    });
    const session = records(journalPath(state, "session", f.session_id)).map((r) => r.event);
    expect(session).toEqual([
      { name: "session.started", data: { session_id: f.session_id, project_root: "/project", resumed: false, ephemeral: false } },
      { name: "session.forked", data: { from_session_id: SESSION, from_agent_id: AGENT, agent_id: f.agent_id, copied_records: 9 } },
      { name: "session.agent_loaded", data: { agent_id: f.agent_id } },
      { name: "session.title_set", data: { title: "the source", origin: "fork" } },
    ]);
    // Listed at once, from its summary; the source is still being written and is untouched.
    expect(listSavedSessions(state).find((x) => x.id === f.session_id)).toMatchObject({ title: "the source", forked_from: SESSION, agents: [f.agent_id], summarized: true });
    expect(records(journalPath(state, "agent", AGENT))).toEqual(sourceRecords);
    expect(existsSync(join(state, FORKS_DIR)) ? readdirSync(join(state, FORKS_DIR)) : []).toEqual([]);

    // The turn finishes: a second fork takes it, and names the agent asked for.
    s.agent.append({ event: { name: "agent.outer_turn_finished", data: { agent_id: AGENT, prompt_id: "p-open", outcome: "completed", rounds: 1 } }, source: { class: "harness" } });
    const g = forkSession(state, SESSION, { agentId: AGENT });
    expect([g.copied_records, g.left_out]).toEqual([14, 0]);
  });

  it("[sessions.fork.refusals] no finished turn, an agent not the session's, an ephemeral agent and a corrupt journal are refused, and nothing is written", async () => {
    const state = stateDir();
    const s = source(state, { summary: false });
    submit(s.agent, "p-1", "still waiting");
    const before = { sessions: sessionIds(state), agents: agentIds(state) };
    const refused = (f: () => unknown, text: string) => {
      expect(f).toThrow(SessionCatalogError);
      expect(f).toThrow(text);
      expect({ sessions: sessionIds(state), agents: agentIds(state) }).toEqual(before);
      expect(existsSync(join(state, FORKS_DIR)) ? readdirSync(join(state, FORKS_DIR)) : []).toEqual([]);
    };
    // The members come from the journal when there is no summary.
    refused(() => forkSession(state, SESSION), "has not finished a turn yet: there is nothing to fork");
    refused(() => forkSession(state, SESSION, { agentId: "a-elsewhere" }), "agent a-elsewhere is not an agent of session s-source-1");
    s.store.close();

    const e = stateDir();
    source(e, { ephemeral: true }).turn("q", "a");
    const eBefore = agentIds(e);
    expect(() => forkSession(e, SESSION)).toThrow("is ephemeral: it keeps no conversation to fork");
    expect(agentIds(e)).toEqual(eBefore);

    const c = stateDir();
    const cs = source(c);
    cs.turn("q", "a");
    cs.store.close();
    // A frame whose length runs past the journal's cap: corruption, refused with the file named.
    writeFileSync(journalPath(c, "agent", AGENT), Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1, 2, 3]), { flag: "a" });
    const cBefore = { sessions: sessionIds(c), agents: agentIds(c) };
    expect(() => forkSession(c, SESSION)).toThrow(`cannot read ${journalPath(c, "agent", AGENT)}`);
    expect({ sessions: sessionIds(c), agents: agentIds(c) }).toEqual(cBefore);
  });

  it("[sessions.fork.crash-all-or-nothing] a forking process killed at each step and at random times leaves the whole fork or no session; the next fork removes what it left", async () => {
    const state = stateDir();
    const s = source(state);
    const long = "x".repeat(4000);
    for (let i = 0; i < 400; i++) s.turn(`question ${i} ${long}`, `answer ${i} ${long}`);
    s.store.close();
    const full = records(journalPath(state, "agent", AGENT)).length;
    const script = join(state, "fork-child.ts");
    writeFileSync(
      script,
      [
        `import { forkSession } from ${JSON.stringify(join(process.cwd(), "handwritten/sessions/index.js"))};`,
        `const at = process.env.KILL_AT;`,
        `process.stdout.write("go\\n");`,
        `forkSession(${JSON.stringify(state)}, ${JSON.stringify(SESSION)}, { onStep: (step) => { if (step === at) process.kill(process.pid, "SIGKILL"); } });`,
      ].join("\n"),
    );
    const runChild = (o: { killAt?: string; afterMs?: number }) =>
      new Promise<void>((resolve) => {
        const child = spawn(process.execPath, ["--import", "tsx", script], { env: { ...process.env, ...(o.killAt ? { KILL_AT: o.killAt } : {}) }, stdio: ["ignore", "pipe", "inherit"] });
        child.stdout.once("data", () => {
          if (o.afterMs !== undefined) setTimeout(() => child.kill("SIGKILL"), o.afterMs);
        });
        child.on("exit", () => resolve());
      });

    /** Every published session is whole; every agent folder is a session's. */
    const check = () => {
      const members = new Set<string>();
      for (const id of sessionIds(state)) {
        const events = records(journalPath(state, "session", id)).map((r) => r.event);
        const loaded = events.filter((e) => e.name === "session.agent_loaded").map((e) => e.data.agent_id as string);
        loaded.forEach((a) => members.add(a));
        if (id === SESSION) continue;
        const forked = events.find((e) => e.name === "session.forked");
        expect(forked?.data.copied_records).toBe(full);
        expect(records(journalPath(state, "agent", loaded[0] as string))).toHaveLength(full);
      }
      return members;
    };
    const orphans = () => agentIds(state).filter((a) => !check().has(a));

    for (const killAt of ["staged", "agent_published"]) {
      await runChild({ killAt });
      expect(sessionIds(state)).toEqual([SESSION]); // nothing published
    }
    // The second kill left its agent folder published with no session: the next fork removes it.
    expect(orphans()).toHaveLength(1);
    for (const afterMs of [0, 5, 10, 20, 40, 80, 160, 320]) await runChild({ afterMs });
    const made = forkSession(state, SESSION);
    expect(made.copied_records).toBe(full);
    expect(orphans()).toEqual([]);
    expect(readdirSync(join(state, FORKS_DIR))).toEqual([]);
    check();
  }, 120_000);
});
