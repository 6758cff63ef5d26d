import { describe, expect, it } from "vitest";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runTau } from "../../support/run-tau.js";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";
import { replayJournal, validateJournalRecord, type JournalRecord } from "../../../handwritten/store/index.js";
import { exitCodeOf } from "../../../handwritten/cli/errors.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));
const cleanups = useCleanups();

function workspace(): Workspace & { userSkill: string; projectSkill: string } {
  const w = workspaceIn(cleanups);
  const { home, project } = w;
  const write = (dir: string, text: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "SKILL.md"), text);
    return join(dir, "SKILL.md");
  };
  const userSkill = write(join(home, "config", "skills", "greet"), '---\nname: greet\ndescription: "Greet the user by name"\n---\nSay hello warmly.\n');
  const projectSkill = write(join(project, ".tau", "skills", "release-notes"), "---\nname: release-notes\ndescription: Write release notes from the git log\nlicense: MIT\n---\n# Release notes\n\n1. Read `git log`.\n2. Group by area.\n");
  write(join(project, ".tau", "skills", "broken"), "---\nname: broken\n---\nno description\n");
  return { ...w, env: { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-skills", OPENAI_MODEL: "fake-model" }, userSkill, projectSkill };
}

describe("skills through the real tau binary", () => {
  it("[skills.print.listing] tau dev print-system-prompt lists valid skills and reports the skipped one on stderr", async () => {
    const { env, project, userSkill, projectSkill } = workspace();
    const r = await runTau(["dev", "print-system-prompt"], { env, cwd: project });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("<skills>");
    expect(r.stdout).toContain(`- greet: Greet the user by name (${userSkill})`);
    expect(r.stdout).toContain(`- release-notes: Write release notes from the git log (${projectSkill})`);
    expect(r.stdout).not.toContain("broken");
    expect(r.stderr).toContain("broken/SKILL.md: front matter has no `description`");
  });

  it("[skills.load.run] tau run --skill submits the skill body plus the prompt, lists skills in the system prompt, and journals it", async () => {
    const { env, home, project, projectSkill } = workspace();
    fake.enqueue(textResponse("notes written"));
    const before = fake.chatRequests.length;
    const r = await runTau(["run", "--skill", "release-notes", "-p", "for v1.2 only"], { env, cwd: project });
    // The workspace's broken skill is reported as a warning, and nothing else is.
    expect(r.stderr).toBe(`tau: warning: skill skipped: ${join(project, ".tau", "skills", "broken", "SKILL.md")}: front matter has no \`description\`\n`);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("notes written\n");
    expect(fake.chatRequests.length - before).toBe(1);
    const body = fake.chatRequests[before]!.body as { messages: Array<{ role: string; content: string }> };
    const expected = `<skill name="release-notes" path="${projectSkill}">\n# Release notes\n\n1. Read \`git log\`.\n2. Group by area.\n</skill>\n\nfor v1.2 only`;
    expect(body.messages.at(-1)).toEqual({ role: "user", content: `<user>\n${expected}\n</user>` });
    expect(body.messages[0]?.role).toBe("system");
    expect(body.messages[0]?.content).toContain("- release-notes: Write release notes from the git log");
    const [agent] = readdirSync(join(home, "state", "agents"));
    const journal = replayJournal<JournalRecord>(join(home, "state", "agents", agent!, "events.cbor"), { validate: validateJournalRecord }).records;
    const submitted = journal.find((x) => x.event.name === "agent.prompt_submitted")!.event.data;
    expect(submitted).toMatchObject({ source: "human_ui", mode: "queue", text: expected });
    expect(journal.at(-1)?.event).toMatchObject({ name: "agent.outer_turn_finished", data: { outcome: "completed" } });

    // A skill alone, without -p, is a prompt too.
    fake.enqueue(textResponse("hello!"));
    const r2 = await runTau(["run", "--skill", "greet"], { env, cwd: project });
    expect(r2.code).toBe(0);
    const last = (fake.chatRequests.at(-1)!.body as { messages: Array<{ content: string }> }).messages.at(-1)?.content;
    expect(last).toMatch(/^<user>\n<skill name="greet" path="[^"]+">\nSay hello warmly.\n<\/skill>\n<\/user>$/);
  });

  it("[skills.load.unknown] an unknown skill is a clear error and nothing reaches the model", async () => {
    const { env, project } = workspace();
    const before = fake.chatRequests.length;
    const r = await runTau(["run", "--skill", "nope", "-p", "x"], { env, cwd: project });
    expect(r.code).toBe(exitCodeOf("TAU-E0309")); // refused: nothing was sent
    expect(r.stderr).toContain('unknown skill "nope"; known skills: greet, release-notes');
    expect(fake.chatRequests.length).toBe(before);
    const skipped = await runTau(["run", "--skill", "broken"], { env, cwd: project });
    expect(skipped.code).toBe(exitCodeOf("TAU-E0309"));
    expect(skipped.stderr).toContain("broken/SKILL.md: front matter has no `description`");
    expect(fake.chatRequests.length).toBe(before);
  });
});
