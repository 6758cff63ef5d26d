// Saved sessions from the command line: titles from the first prompt, `tau session list --all` read
// from the sessions' summaries, and `tau session rm` (SPEC-session-lifecycle, GATE-saved-sessions).
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTau } from "../../support/run-tau.js";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { isAlive, startDaemon, waitForOwnedDaemons } from "../../support/daemon.js";
import { textResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { exitCodeOf } from "../../../handwritten/cli/errors.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function workspace(): Workspace {
  const w = workspaceIn(cleanups);
  return { ...w, env: { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "fake-model" } };
}

/** Runs one prompt to completion in a new saved session; its id. */
async function session(w: Workspace, prompt: string): Promise<string> {
  const before = new Set(sessionIds(w));
  fake.enqueue(textResponse("done"));
  const r = await runTau(["run", prompt], { env: w.env, cwd: w.project });
  expect(r.code, r.stderr).toBe(0);
  waitForOwnedDaemons(w.home);
  const made = sessionIds(w).filter((id) => !before.has(id));
  expect(made).toHaveLength(1);
  return made[0] as string;
}

const sessionIds = (w: Workspace) => (existsSync(join(w.home, "state", "sessions")) ? readdirSync(join(w.home, "state", "sessions")).filter((n) => n.startsWith("s-")) : []);

interface Listed {
  session_id: string;
  title: string | null;
  project_root: string | null;
  running: boolean;
  bytes: number;
  agents: string[];
  last_active: string;
}

async function listAll(w: Workspace): Promise<Listed[]> {
  const r = await runTau(["session", "list", "--all", "--json"], { env: w.env });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Listed[];
}

describe("saved sessions", () => {
  it("[sessions.list.all-from-summaries] lists every saved session with its title, project, size and state, from summaries, not journals", async () => {
    const w = workspace();
    const first = await session(w, "fix the flaky\tsandbox   test\nand then explain why");
    const second = await session(w, "\n  write the release notes  ");
    const rows = await listAll(w);
    expect(rows.map((r) => r.session_id)).toEqual([second, first]);
    expect(rows[1]).toMatchObject({ title: "fix the flaky sandbox test", project_root: w.project, running: false });
    expect(rows[0]).toMatchObject({ title: "write the release notes", project_root: w.project, running: false });
    for (const r of rows) {
      expect(r.agents).toHaveLength(1);
      const agentJournal = join(w.home, "state", "agents", r.agents[0] as string, "events.cbor");
      expect(r.bytes).toBeGreaterThan(statSync(agentJournal).size);
    }
    // The table: one row per session, newest first.
    const table = await runTau(["session", "list", "--all"], { env: w.env });
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^SESSION\s+STATE\s+AGE\s+SIZE\s+LINEAGE\s+TITLE\s+PROJECT$/);
    expect(lines[1]).toMatch(new RegExp(`^${second}\\s+saved\\s+\\S+\\s+[\\d.]+ KiB\\s+-\\s+write the release notes\\s+${w.project}$`));
    expect(lines[2]).toContain("fix the flaky sandbox test");

    // Listing reads no journal: with every journal's bytes replaced by garbage, it says the same
    // (in another order: rewriting the journals made them newer).
    const journals = [...rows.flatMap((r) => r.agents.map((a) => join(w.home, "state", "agents", a, "events.cbor"))), ...rows.map((r) => join(w.home, "state", "sessions", r.session_id, "events.cbor"))];
    for (const j of journals) writeFileSync(j, Buffer.alloc(statSync(j).size, 0xff));
    const byId = (a: Array<string | null>, b: Array<string | null>) => String(a[0]).localeCompare(String(b[0]));
    expect((await listAll(w)).map((r) => [r.session_id, r.title]).sort(byId)).toEqual(rows.map((r) => [r.session_id, r.title]).sort(byId));

    // A session without a summary (from before summaries) is still listed, with its project and no title.
    rmSync(join(w.home, "state", "sessions", first, "meta.json"));
    const again = await listAll(w);
    expect(again.find((r) => r.session_id === first)).toMatchObject({ title: null, project_root: w.project });
  });

  it("[sessions.rm.refuses-running-and-unknown] refuses a running session and unknown or ambiguous ids, removing nothing", async () => {
    const w = workspace();
    const saved = await session(w, "keep me");
    const d = await startDaemon(w.env, ["--project-root", w.project]);
    cleanups.push(() => {
      if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
    });
    const running = await runTau(["session", "rm", d.session_id], { env: w.env });
    expect(running.code).toBe(exitCodeOf("TAU-E0308"));
    expect(running.stderr).toBe(`tau: session rm: ${d.session_id} is running (pid ${d.pid}); end it first (:quit in its UI), then remove it [TAU-E0308]\n`);
    expect(existsSync(join(w.home, "state", "sessions", d.session_id, "events.cbor"))).toBe(true);
    expect((await listAll(w)).find((r) => r.session_id === d.session_id)).toMatchObject({ running: true });

    const unknown = await runTau(["session", "rm", saved, "s-nosuch"], { env: w.env });
    expect(unknown.code).toBe(exitCodeOf("TAU-E0118"));
    expect(unknown.stderr).toBe('tau: session rm: no saved session matches "s-nosuch"; nothing was removed [TAU-E0118]\n');
    const ambiguous = await runTau(["session", "rm", "s-"], { env: w.env });
    expect(ambiguous.code).toBe(exitCodeOf("TAU-E0118"));
    expect(ambiguous.stderr).toMatch(/^tau: session rm: "s-" is ambiguous: 2 sessions match \(.*\); nothing was removed \[TAU-E0118\]\n$/);
    expect(sessionIds(w).sort()).toEqual([saved, d.session_id].sort());
  });

  it("[sessions.rm.removes-session-and-agents] removes a stopped session's folder and its agents' folders, by id or unique prefix", async () => {
    const w = workspace();
    const gone = await session(w, "remove me");
    const kept = await session(w, "keep me");
    const rows = await listAll(w);
    const goneAgents = rows.find((r) => r.session_id === gone)?.agents ?? [];
    const keptAgents = rows.find((r) => r.session_id === kept)?.agents ?? [];
    expect(goneAgents).toHaveLength(1);
    // Its shortest unique prefix.
    let prefix = "s-";
    for (const ch of gone.slice(2)) {
      prefix += ch;
      if (!kept.startsWith(prefix)) break;
    }
    const r = await runTau(["session", "rm", prefix], { env: w.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^removed ${gone} \\(remove me\\), [\\d.]+ KiB\\n$`));
    expect(existsSync(join(w.home, "state", "sessions", gone))).toBe(false);
    for (const a of goneAgents) expect(existsSync(join(w.home, "state", "agents", a))).toBe(false);
    expect(readdirSync(join(w.home, "state", ".trash"))).toEqual([]);
    // The other session is whole, and resumable.
    expect((await listAll(w)).map((x) => x.session_id)).toEqual([kept]);
    for (const a of keptAgents) expect(readFileSync(join(w.home, "state", "agents", a, "events.cbor")).length).toBeGreaterThan(0);
    const d = await startDaemon(w.env, ["--resume", kept]);
    expect(d.session_id).toBe(kept);
    process.kill(d.pid, "SIGTERM");
  });
});
