// AgentContext.retake (SPEC-extension-declarations): as an agent's initialization finishes it takes
// the fragments again, and its AGENTS.md and skills only when a discovery snapshot changed since it
// took them — the local files are not read twice for nothing.
import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentContext, type ContextHolder } from "../../../handwritten/harness/agent-context.js";

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop() as string, { recursive: true, force: true });
});

function setup(): { context: AgentContext; project: string; fragments: Array<{ instance: string; key: string; text: string }> } {
  const d = mkdtempSync(join(tmpdir(), "tau-retake-"));
  dirs.push(d);
  const config = join(d, "config");
  const project = join(d, "project");
  mkdirSync(config);
  mkdirSync(project);
  writeFileSync(join(project, "AGENTS.md"), "first rule");
  const fragments: Array<{ instance: string; key: string; text: string }> = [];
  const context = new AgentContext({ projectRoot: project, configRoot: config, skillSkipped: () => {}, fragments: () => [...fragments] });
  return { context, project, fragments };
}

describe("AgentContext.retake", () => {
  it("takes the fragments again, and AGENTS.md only after a discovery change", () => {
    const { context, project, fragments } = setup();
    const agent: ContextHolder = {};
    context.initialize(agent);
    expect(agent.agentsMd?.map((f) => f.text)).toEqual(["first rule"]);
    expect(agent.fragments).toEqual([]);

    fragments.push({ instance: "kb", key: "style", text: "Be brief." });
    writeFileSync(join(project, "AGENTS.md"), "second rule");
    context.retake(agent);
    expect(agent.fragments).toEqual([{ instance: "kb", key: "style", text: "Be brief." }]);
    expect(agent.agentsMd?.map((f) => f.text)).toEqual(["first rule"]); // no snapshot changed: not read again

    context.discoveryChanged();
    context.retake(agent);
    expect(agent.agentsMd?.map((f) => f.text)).toEqual(["second rule"]);
  });
});
