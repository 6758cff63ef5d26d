import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runTau } from "../../support/run-tau.js";

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop() as string, { recursive: true, force: true });
});

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? [`${p}/`, ...walk(p)] : [p];
  });
}

describe("tau dev print-*", () => {
  it("[dev.print.writes-nothing] renders the system prompt, tools and a first request without writing anything", async () => {
    const home = mkdtempSync(join(tmpdir(), "tau-print-"));
    dirs.push(home);
    const project = join(home, "project");
    mkdirSync(project);
    writeFileSync(join(project, "AGENTS.md"), "Prefer small commits.\n");
    const before = walk(home);
    const env = { TAU_HOME: home };
    const system = await runTau(["dev", "print-system-prompt"], { env, cwd: project });
    expect(system.code).toBe(0);
    expect(system.stdout).toContain(`working in the user's project at ${project}`);
    expect(system.stdout).toContain("Prefer small commits.");
    const tools = await runTau(["dev", "print-tools"], { env, cwd: project });
    expect(tools.code).toBe(0);
    expect((JSON.parse(tools.stdout) as Array<{ name: string }>).map((t) => t.name)).toEqual([
      ..."agent_cancel agent_message agent_start agent_unwatch agent_wait agent_watch".split(" "),
      ..."cd compact edit find grep ls read shell work_status write".split(" "),
    ]); // compact and the agent tools: the harness's own, on by default
    const prompt = await runTau(["dev", "print-prompt", "fix </user> it"], { env, cwd: project });
    expect(prompt.code).toBe(0);
    expect((JSON.parse(prompt.stdout) as { messages: Array<{ text: string }> }).messages).toEqual([{ role: "user", text: "<user>\nfix </ user> it\n</user>" }]);
    expect(walk(home)).toEqual(before);
  });
});
