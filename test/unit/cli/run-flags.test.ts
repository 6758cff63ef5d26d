// `tau run`'s flags are declared once (run/flags.ts): the command framework's `run` command, the fast
// path's parser, `tau run --help` and the launcher script all follow the table.
import { Parser } from "@oclif/core";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import Run from "../../../handwritten/cli/commands/run.js";
import { launcherShell } from "../../../handwritten/cli/launcher-script.js";
import { EPHEMERAL_FLAG, RUN_FLAGS, parseRunArgs, type RunFlag } from "../../../handwritten/cli/run/index.js";
import { runTau } from "../../support/run-tau.js";
import { TAU_BIN } from "../../support/paths.js";

const table = Object.entries(RUN_FLAGS) as Array<[string, RunFlag]>;

/** An argument list giving every flag of the table once (a multiple one twice), with a prompt. */
function everyFlag(): string[] {
  const argv: string[] = [];
  for (const [name, f] of table) {
    if (name === "prompt-stdin") continue; // it would leave the prompt to standard input
    if (name === "continue" || name === "resume" || name === "fork") continue; // they refuse each other and --ephemeral (--fork needs one of them): read on their own below
    if (f.type === "boolean") argv.push(`--${name}`);
    else if (f.multiple) argv.push(`--${name}`, `${name}=1`, `--${name}`, `${name}=2`);
    else argv.push(f.char ? `-${f.char}` : `--${name}`, name === "prompt" ? "hello" : name === "approval" ? "never" : `${name}-value`);
  }
  return argv;
}

describe("tau run's flags", () => {
  it("[run.flags.one-table] the command framework's run command has exactly the table's flags, as the table declares them", () => {
    const oclif = Run.flags as Record<string, { type: string; char?: string; multiple?: boolean; description?: string }>;
    expect(Object.keys(oclif).sort()).toEqual(Object.keys(RUN_FLAGS).sort());
    for (const [name, f] of table) {
      const o = oclif[name];
      expect(o?.type === "boolean" ? "boolean" : "string", name).toBe(f.type);
      expect(o?.char, name).toBe(f.char);
      expect(o?.multiple === true, name).toBe(f.multiple === true);
      expect(o?.description, name).toBe(f.description);
    }
  });

  it("[run.flags.one-table] the fast path's parser takes exactly the table's flags and reads them as the command framework does", async () => {
    for (const argv of [everyFlag(), ["--continue", "-p", "hi"], ["--resume", "s-x", "-p", "hi"], ["--continue", "--fork", "-p", "hi"], ["--resume", "s-x", "--fork", "-p", "hi"], ["-p", "hi"], ["--prompt", "::literal", "--json"], ["--skill", "s"], ["--prompt-stdin", "--model", "m"]]) {
      const fast = parseRunArgs(argv);
      expect(fast.ok, argv.join(" ")).toBe(true);
      const { flags } = await Parser.parse(argv, { flags: Run.flags, args: Run.args, strict: true });
      if (!fast.ok) continue;
      const o = fast.args.options;
      // The sandbox flags become the harness configuration's `sandbox` keys, ahead of the user's overrides.
      const sandbox = ["sandbox.approval=never", ...(flags["no-sandbox"] === true ? ["sandbox.enabled=false"] : []), ...(flags["sandbox-config"] ? [`sandbox.config_file=${JSON.stringify(resolve(flags["sandbox-config"]))}`] : [])];
      expect({ json: o.json, ephemeral: o.ephemeral, model: o.model, harnessConfig: o.harnessConfig }).toEqual({
        json: flags.json === true,
        ephemeral: flags.ephemeral === true,
        model: flags.model,
        harnessConfig: [...sandbox, ...(flags["harness-config"] ?? [])],
      });
      const fork = flags.fork === true ? { fork: true } : {};
      expect(o.resume).toEqual(flags.continue === true ? { last: true, ...fork } : flags.resume !== undefined ? { session: flags.resume, ...fork } : undefined);
      expect(fast.args.promptStdin === "explicit").toBe(flags["prompt-stdin"] === true);
      if (fast.args.promptStdin === "no" && o.skill === undefined) expect(fast.args.prompt?.text).toBe((flags.prompt ?? "").replace(/^::/, ":"));
    }
    // Anything the table does not declare is refused by both.
    for (const argv of [["--bogus", "-p", "hi"], ["-x", "-p", "hi"], ["hi", "stray", "more"]]) {
      const fast = parseRunArgs(argv);
      expect(fast.ok, argv.join(" ")).toBe(false);
      expect(fast.ok ? "" : fast.code).toBe("TAU-E0101");
      await expect(Parser.parse(argv, { flags: Run.flags, args: Run.args, strict: true }), argv.join(" ")).rejects.toThrow();
    }
  });

  it("[run.flags.one-table] tau run --help lists every flag of the table with its description", async () => {
    const r = await runTau(["run", "--help"]);
    expect(r.code).toBe(0);
    const help = r.stdout.replace(/\s+/g, " ");
    for (const [name, f] of table) {
      expect(help, name).toContain(`--${name}`);
      if (f.char) expect(help, name).toContain(`-${f.char}, --${name}`);
      expect(help, name).toContain(f.description);
    }
  });

  it("[run.flags.one-table] the launcher script finds --ephemeral by the table's name for it, a boolean flag", () => {
    expect(RUN_FLAGS[EPHEMERAL_FLAG].type).toBe("boolean");
    expect(launcherShell()).toContain(`--${EPHEMERAL_FLAG}) __tau_e=1;;`);
    expect(readFileSync(TAU_BIN, "utf8")).toContain(`--${EPHEMERAL_FLAG}) __tau_e=1;;`);
  });
});
