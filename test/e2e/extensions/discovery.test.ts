// Discovery snapshots from extensions (SPEC-extension-declarations, "Discovery snapshots"), through
// a real daemon and test-dummy processes: complete snapshots swapped in at once, invalid items
// diagnosed and left out, bounds, a dropped or stale snapshot changing nothing, and the session's
// skills as current state for a UI that attaches later.
import { describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor, TestClient } from "../../support/daemon.js";
import { declarationSuite, dummy } from "./support.js";

const suite = declarationSuite();
const { session } = suite;

/** A SKILL.md under the tau home, for an extension to point at. */
function skillFile(home: string, name: string, description: string): string {
  const dir = join(home, "ext-skills", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: ${description}\n---\nDo it well.\n`);
  return join(dir, "SKILL.md");
}

const agentsMd = (path: string, text: string) => ({ kind: "agents_md", path, text });
const skill = (name: string, description: string, path: string) => ({ kind: "skill", name, description, path });

/** The driver declares one snapshot of `items`; resolves once it committed (and the daemon handled what came before). */
async function declare(c: TestClient, items: unknown[], extra: Record<string, unknown> = {}): Promise<void> {
  const before = c.deliveriesOf("extension.discovery_snapshot_declared").length;
  c.emit("extension.event", { category: "test", name: "discovery", payload: { items, ...extra } });
  await waitFor(() => c.deliveriesOf("extension.discovery_snapshot_declared").length > before, "the snapshot to commit", 30_000);
  await c.sync();
}

const lastSkills = (c: TestClient) => c.deliveriesOf("harness.session_skills_available").at(-1)?.data;

describe("discovery snapshots from extensions", () => {
  it("[declarations.discovery.swap-and-freeze] a snapshot replaces the instance's whole source; agents initialized after get it, earlier ones keep theirs", async () => {
    const { c, home } = await session([dummy("kb", { driver: true })]);
    const deploy = skillFile(home, "deploy", "Deploy the service");
    await declare(c, [agentsMd("/kb/team/AGENTS.md", "Team rule: small commits."), skill("deploy", "Deploy the service", deploy)]);
    expect(lastSkills(c)).toMatchObject({ skills: [{ name: "deploy", description: "Deploy the service", path: deploy, source: "kb" }], agents_md: ["/kb/team/AGENTS.md"] });
    const first = await c.createAgent("r-first");
    const s1 = await suite.systemOf(c, first, "disc-1");
    expect(s1).toContain('<agents_md path="/kb/team/AGENTS.md">\nTeam rule: small commits.\n</agents_md>');
    expect(s1).toContain(`- deploy: Deploy the service (${deploy})`);

    await declare(c, [agentsMd("/kb/other/AGENTS.md", "Other rule.")]);
    expect(lastSkills(c)).toMatchObject({ skills: [], agents_md: ["/kb/other/AGENTS.md"] });
    const second = await c.createAgent("r-second");
    const s2 = await suite.systemOf(c, second, "disc-2");
    expect(s2).toContain("Other rule.");
    expect(s2).not.toContain("Team rule");
    expect(s2).not.toContain("- deploy:");
    expect(await suite.systemOf(c, first, "disc-3")).toBe(s1);
  });

  it("[declarations.discovery.invalid-omitted] invalid items are diagnosed in one notice and left out; the valid rest is swapped in", async () => {
    const { c, home } = await session([dummy("kb", { driver: true })]);
    const good = skillFile(home, "review", "Review a change");
    await declare(c, [
      agentsMd("/kb/AGENTS.md", "Valid."),
      agentsMd("/kb/big/AGENTS.md", "z".repeat(64 * 1024 + 1)),
      agentsMd("relative/AGENTS.md", "Relative."),
      skill("Bad_Name", "Bad name", good),
      skill("review", "Review a change", good),
      skill("review", "Again", good),
      skill("blank", "", good),
    ]);
    const notice = await c.delivered("harness.notice", (x) => String(x.text).startsWith("discovery snapshot from extension kb: 5 invalid item(s) omitted"));
    for (const item of ["item 1 (agents_md", "item 2 (agents_md", "item 3 (skill \"Bad_Name\")", "item 5 (skill \"review\")", "item 6 (skill \"blank\")"]) expect(notice.text).toContain(item);
    expect(lastSkills(c)).toMatchObject({ skills: [{ name: "review", source: "kb" }], agents_md: ["/kb/AGENTS.md"] });
    const agent = await c.createAgent();
    const system = await suite.systemOf(c, agent, "omitted");
    expect(system).toContain("Valid.");
    expect(system).not.toContain("Relative.");
    expect(system).not.toContain("zzzz");
  });

  it("[declarations.discovery.bounds] a snapshot of more than 256 items is refused whole and the previous one stays", async () => {
    const { c } = await session([dummy("kb", { driver: true })]);
    await declare(c, [agentsMd("/kb/AGENTS.md", "Kept.")]);
    await declare(c, Array.from({ length: 257 }, (_, i) => agentsMd(`/kb/${i}/AGENTS.md`, "x")));
    await c.delivered("harness.notice", (x) => x.text === "discovery snapshot from extension kb refused: 257 items, more than 256; its previous one stays");
    const agent = await c.createAgent();
    const system = await suite.systemOf(c, agent, "bounded");
    expect(system).toContain("Kept.");
    expect(system).not.toContain("/kb/0/AGENTS.md");
  });

  it("[declarations.discovery.interceptor-drop] a snapshot an interceptor drops never commits and changes nothing", async () => {
    const { c } = await session([dummy("kb", { driver: true }), dummy("guard", { tools: [], drop_keys: ["discovery"] })]);
    c.emit("extension.event", { category: "test", name: "discovery", payload: { items: [agentsMd("/kb/AGENTS.md", "Dropped.")] } });
    c.emit("extension.event", { category: "test", name: "fragments", payload: { fragments: [{ key: "after", text: "After the snapshot." }] } });
    await waitFor(() => c.deliveriesOf("extension.prompt_fragment_declared").length === 1, "the declaration after the snapshot", 30_000);
    expect(c.deliveriesOf("extension.discovery_snapshot_declared")).toEqual([]);
    const agent = await c.createAgent();
    const system = await suite.systemOf(c, agent, "dropped");
    expect(system).toContain("After the snapshot.");
    expect(system).not.toContain("Dropped.");
  });

  it("[declarations.discovery.stale-generation] a snapshot that commits after its connection ended changes nothing", async () => {
    const { c } = await session([dummy("kb", { driver: true }), dummy("guard", { tools: [], hold_keys: ["discovery"] })]);
    c.emit("extension.event", { category: "test", name: "discovery", payload: { items: [agentsMd("/kb/AGENTS.md", "From a process that is gone.")], exit: true } });
    await waitFor(() => c.deliveriesOf("extension.discovery_snapshot_declared").length === 1, "the held snapshot to commit", 30_000);
    await waitFor(() => c.deliveriesOf("tool.register", (x) => x.name === "echo").length >= 2, "the respawned declarer", 30_000);
    expect(c.deliveriesOf("harness.session_skills_available")).toEqual([]);
    const agent = await c.createAgent();
    expect(await suite.systemOf(c, agent, "stale")).not.toContain("From a process that is gone.");
  });

  it("[declarations.discovery.late-subscriber] harness.session_skills_available is current state: a UI attaching later receives the latest", async () => {
    const { c, d, home } = await session([dummy("kb", { driver: true })]);
    const path = skillFile(home, "triage", "Triage an issue");
    await declare(c, [skill("triage", "Triage an issue", path)]);
    await declare(c, [agentsMd("/kb/AGENTS.md", "Latest.")]);
    const late = await TestClient.ui(d.socket, d.session_id);
    suite.cleanups.push(() => late.close());
    late.send({ message: "subscribe", payload: { historical: ["harness.session_skills_available"], live: [] } });
    const projection = await late.delivered("harness.session_skills_available");
    expect(projection).toEqual({ skills: [], agents_md: ["/kb/AGENTS.md"] });
    await late.sync();
    expect(late.deliveriesOf("harness.session_skills_available")).toEqual([]); // one current value, not a history
  });

  it("[declarations.discovery.agent-scope] a snapshot for one agent's pending initialization reaches that agent only; a stale initialization id changes nothing", async () => {
    const { c, home } = await session([dummy("kb", { driver: true, hold_agents: true })]);
    const path = skillFile(home, "own-skill", "Only for this agent");
    const mine = await c.createAgent("r-mine");
    const init = await c.delivered("agent.initialization_started", (x) => x.agent_id === mine);
    const other = await c.createAgent("r-other");
    const drive = (name: string, payload: Record<string, unknown>) => c.emit("extension.event", { category: "test", name, payload });
    drive("agent_discovery", { agent_id: mine, items: [agentsMd("/kb/forged/AGENTS.md", "Forged.")], initialization_id: "init-forged" });
    drive("agent_discovery", { agent_id: mine, items: [agentsMd("/kb/mine/AGENTS.md", "Only mine."), skill("own-skill", "Only for this agent", path)] });
    await waitFor(() => c.deliveriesOf("agent.discovery_snapshot_declared", (x) => x.initialization_id === init.initialization_id).length === 1, "the snapshot to commit", 30_000);
    drive("agent_ready", { agent_id: mine });
    drive("agent_ready", { agent_id: other });
    const system = await suite.systemOf(c, mine, "scoped-mine");
    expect(system).toContain('<agents_md path="/kb/mine/AGENTS.md">\nOnly mine.\n</agents_md>');
    expect(system).toContain(`- own-skill: Only for this agent (${path})`);
    expect(system).not.toContain("Forged.");
    const otherSystem = await suite.systemOf(c, other, "scoped-other");
    expect(otherSystem).not.toContain("Only mine.");
    expect(otherSystem).not.toContain("own-skill");
    expect(c.deliveriesOf("harness.session_skills_available")).toEqual([]); // the session's skills did not change
  });
});
