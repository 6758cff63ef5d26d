import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  MAX_FRONT_MATTER_BYTES,
  MAX_SKILL_DESCRIPTION_CHARS,
  MAX_SKILL_FILE_BYTES,
  MAX_SKILL_PROBLEMS,
  MAX_SKILLS_PER_ROOT,
  discoverSkills,
  loadSkillBody,
  parseSkillFile,
  renderSkillListing,
} from "../../../handwritten/harness/skills.js";
import { DEFAULT_SYSTEM_TEMPLATE, renderSystemPrompt } from "../../../handwritten/harness/context.js";
import { Harness, type Peer } from "../../../handwritten/harness/index.js";
import type { WireMessage } from "../../../generated/index.js";
import { until } from "../../support/harness-kit.js";

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop() as string, { recursive: true, force: true });
});
function roots(): { config: string; project: string } {
  const d = mkdtempSync(join(tmpdir(), "tau-skills-"));
  dirs.push(d);
  const config = join(d, "config");
  const project = join(d, "project");
  mkdirSync(config);
  mkdirSync(project);
  return { config, project };
}

function skill(root: string, folder: string, text: string): string {
  mkdirSync(join(root, folder), { recursive: true });
  const path = join(root, folder, "SKILL.md");
  writeFileSync(path, text);
  return path;
}
const md = (name: string, description: string, body = "Do the thing.\n") => `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n${body}`;

describe("skill discovery", () => {
  it("[skills.discovery.bounds] finds user and project skills, lets the project win, and diagnoses every invalid file at its bound", () => {
    const { config, project } = roots();
    const user = join(config, "skills");
    const proj = join(project, ".tau", "skills");
    skill(user, "greet", md("greet", "Say hello\nnicely"));
    skill(user, "review", md("review", "user review"));
    skill(proj, "review", md("review", "project review"));
    skill(user, "mismatch", md("other", "x"));
    skill(user, "no-desc", "---\nname: no-desc\n---\nbody\n");
    skill(user, "no-front", "# just markdown\n");
    skill(user, "unclosed", "---\nname: unclosed\ndescription: x\n");
    skill(user, "bad-yaml", "---\nname: [unclosed\n---\n");
    skill(user, "list", "---\n- a\n- b\n---\n");
    skill(user, "Upper", md("Upper", "x"));
    skill(user, "desc-at", md("desc-at", "d".repeat(MAX_SKILL_DESCRIPTION_CHARS)));
    skill(user, "desc-over", md("desc-over", "d".repeat(MAX_SKILL_DESCRIPTION_CHARS + 1)));
    const n64 = `a${"b".repeat(63)}`;
    skill(user, n64, md(n64, "long name at the bound"));
    const n65 = `a${"b".repeat(64)}`;
    skill(user, n65, md(n65, "one over"));
    const head = md("file-at", "size");
    skill(user, "file-at", head + "x".repeat(MAX_SKILL_FILE_BYTES - Buffer.byteLength(head)));
    const head2 = md("file-over", "size");
    skill(user, "file-over", head2 + "x".repeat(MAX_SKILL_FILE_BYTES - Buffer.byteLength(head2) + 1));
    const fmPad = (n: number) => `---\nname: fm\ndescription: x\n#${"p".repeat(n)}\n---\n`;
    const base = Buffer.byteLength("name: fm\ndescription: x\n#\n");
    skill(user, "fm", fmPad(MAX_FRONT_MATTER_BYTES - base));
    mkdirSync(join(user, "dir-skill", "SKILL.md"), { recursive: true });
    mkdirSync(join(user, "empty-folder"));
    skill(user, ".hidden", md(".hidden", "x"));

    const scan = discoverSkills(config, project);
    expect(scan.skills.map((s) => [s.name, s.source])).toEqual([
      [n64, "user"],
      ["desc-at", "user"],
      ["file-at", "user"],
      ["fm", "user"],
      ["greet", "user"],
      ["review", "project"],
    ]);
    expect(scan.skills.find((s) => s.name === "greet")?.description).toBe("Say hello nicely");
    expect(scan.skills.find((s) => s.name === "review")?.path).toBe(join(proj, "review", "SKILL.md"));
    const problems = scan.problems.join("\n");
    for (const p of [
      'name "other" differs from its folder "mismatch"',
      "no-desc/SKILL.md: front matter has no `description`",
      "no-front/SKILL.md: does not start with a `---` front matter block",
      "unclosed/SKILL.md: the front matter block is not closed",
      "bad-yaml/SKILL.md: invalid front matter YAML",
      "list/SKILL.md: front matter is not a map",
      "Upper/SKILL.md: name",
      `desc-over/SKILL.md: description longer than ${MAX_SKILL_DESCRIPTION_CHARS}`,
      `${n65}/SKILL.md: name`,
      `file-over/SKILL.md: larger than ${MAX_SKILL_FILE_BYTES} bytes`,
      "dir-skill/SKILL.md: not a regular file",
      'replaces the user skill "review"',
    ]) {
      expect(problems).toContain(p);
    }
    expect(problems).not.toContain("empty-folder");
    expect(problems).not.toContain(".hidden");

    // Front matter one byte over its bound.
    skill(user, "fm", fmPad(MAX_FRONT_MATTER_BYTES - base + 1));
    expect(discoverSkills(config, project).problems.join("\n")).toContain(`front matter larger than ${MAX_FRONT_MATTER_BYTES}`);
  });

  it("[skills.discovery.bounds] reads at most the first folders of a root and keeps a bounded list of problems", () => {
    const { config, project } = roots();
    const user = join(config, "skills");
    for (let i = 0; i < MAX_SKILLS_PER_ROOT + 5; i++) {
      const n = `s${String(i).padStart(3, "0")}`;
      skill(user, n, i % 2 === 0 ? md(n, "ok") : "broken");
    }
    const scan = discoverSkills(config, project);
    expect(scan.skills).toHaveLength(MAX_SKILLS_PER_ROOT / 2);
    expect(scan.skills.at(-1)?.name).toBe(`s${String(MAX_SKILLS_PER_ROOT - 2).padStart(3, "0")}`);
    expect(scan.problems).toHaveLength(MAX_SKILL_PROBLEMS);
    expect(scan.problems[0]).toContain(`only the first ${MAX_SKILLS_PER_ROOT}`);
  });

  it("never throws: missing roots and a root that is a file yield nothing", () => {
    const { config, project } = roots();
    expect(discoverSkills(config, project)).toEqual({ skills: [], problems: [] });
    writeFileSync(join(config, "skills"), "not a folder");
    expect(discoverSkills(config, project).skills).toEqual([]);
    expect(discoverSkills(undefined, project).skills).toEqual([]);
  });

  it("loads the current body without front matter, and fails clearly when the file went away", () => {
    const { config, project } = roots();
    const path = skill(join(config, "skills"), "greet", md("greet", "hello", "Step 1.\r\nStep 2.\n\n"));
    const [s] = discoverSkills(config, project).skills;
    expect(loadSkillBody(s!)).toEqual({ body: "Step 1.\r\nStep 2." });
    writeFileSync(path, md("greet", "hello", "Changed.\n"));
    expect(loadSkillBody(s!)).toEqual({ body: "Changed." });
    rmSync(path);
    expect(loadSkillBody(s!)).toEqual({ problem: "its SKILL.md no longer exists" });
    expect(parseSkillFile("\uFEFF---\nname: a\ndescription: b\n---")).toEqual({ name: "a", description: "b", body: "" });
  });

  it("lists skills through the explicit {{skills}} input; skill text is never taken for a placeholder", () => {
    const listing = renderSkillListing([{ name: "a", description: "uses {{cwd}} literally", path: "/x/a/SKILL.md", source: "user", mtimeMs: 0 }]);
    const out = renderSystemPrompt(DEFAULT_SYSTEM_TEMPLATE, { cwd: "/proj", agentsMd: [], skills: listing });
    expect(out).toContain("- a: uses {{cwd}} literally (/x/a/SKILL.md)");
    expect(out).toContain("/proj");
    expect(renderSystemPrompt(DEFAULT_SYSTEM_TEMPLATE, { cwd: "/proj", agentsMd: [] })).not.toContain("<skills>");
    expect(renderSystemPrompt("only {{cwd}}", { cwd: "/p", agentsMd: [], skills: listing })).toBe("only /p");
  });
});

function uiPeer(generation: number): Peer & { sent: WireMessage[] } {
  const sent: WireMessage[] = [];
  return { generation, publisher: { class: "ui_attached", generation }, send: (m) => (sent.push(m), "queued"), sendAsync: async (m) => (sent.push(m), "queued"), sent };
}
function directed(peer: { sent: WireMessage[] }, name: string, requestId: string): Record<string, unknown> | undefined {
  for (const m of peer.sent) if (m.message === "direct" && m.payload.event.name === name && m.payload.event.data.request_id === requestId) return m.payload.event.data;
  return undefined;
}

describe("ui.skill_load in the harness", () => {
  it("[skills.load.frozen-per-agent] submits a known skill as a human prompt, refuses unknown ones, and keeps each agent's snapshot", async () => {
    const { config, project } = roots();
    skill(join(config, "skills"), "greet", md("greet", "Say hello", "Greet the user warmly.\n"));
    const h = await Harness.open({ projectRoot: project, configRoot: config });
    const peer = uiPeer(7);
    h.addPeer(peer);
    const submitted: Array<Record<string, unknown>> = [];
    h.bus.onCommitted("agent.prompt_submitted", (c) => void submitted.push(c.data));
    await h.bus.publish({ name: "ui.create_agent", data: { request_id: "r1" } }, peer.publisher);
    await until(() => directed(peer, "ui.create_agent_result", "r1") !== undefined);
    const agentId = String(directed(peer, "ui.create_agent_result", "r1")?.agent_id);

    // A skill added after the agent initialized is not part of its snapshot.
    skill(join(project, ".tau", "skills"), "late", md("late", "Added later"));
    await h.bus.publish({ name: "ui.skill_load", data: { request_id: "r2", agent_id: agentId, name: "late" } }, peer.publisher);
    await until(() => directed(peer, "ui.skill_load_result", "r2") !== undefined);
    expect(directed(peer, "ui.skill_load_result", "r2")).toEqual({ request_id: "r2", ok: false, error: 'unknown skill "late"; known skills: greet' });
    expect(submitted).toEqual([]);
    expect(h.systemPromptFor(agentId)).not.toContain("late");
    expect(h.systemPromptFor(agentId)).toContain("- greet: Say hello (");

    await h.bus.publish({ name: "ui.skill_load", data: { request_id: "r3", agent_id: agentId, name: "greet", text: "my name is Ada" } }, peer.publisher);
    await until(() => directed(peer, "ui.skill_load_result", "r3") !== undefined);
    const ok = directed(peer, "ui.skill_load_result", "r3");
    expect(ok).toMatchObject({ ok: true });
    expect(submitted).toHaveLength(1);
    expect(submitted[0]).toEqual({
      agent_id: agentId,
      prompt_id: ok?.prompt_id,
      source: "human_ui",
      mode: "queue",
      text: `<skill name="greet" path="${join(config, "skills", "greet", "SKILL.md")}">\nGreet the user warmly.\n</skill>\n\nmy name is Ada`,
    });

    // A new agent initializes with the skills present now.
    await h.bus.publish({ name: "ui.create_agent", data: { request_id: "r4" } }, peer.publisher);
    await until(() => directed(peer, "ui.create_agent_result", "r4") !== undefined);
    const second = String(directed(peer, "ui.create_agent_result", "r4")?.agent_id);
    expect(h.systemPromptFor(second)).toContain("- late: Added later (");

    // An unknown agent is refused (who may publish ui.skill_load at all is the generated authority matrix).
    await h.bus.publish({ name: "ui.skill_load", data: { request_id: "r5", agent_id: "a-nope", name: "greet" } }, peer.publisher);
    await until(() => directed(peer, "ui.skill_load_result", "r5") !== undefined);
    expect(directed(peer, "ui.skill_load_result", "r5")).toMatchObject({ ok: false, error: "unknown agent a-nope" });
    expect(submitted).toHaveLength(1);
    await h.shutdown("requested");
  });
});
