// `tau daemon`'s flags (startup/daemon-flags.ts) and those of `tau`, `tau attach` and `tau resume`
// (cli/tui/flags.ts) are declared once, as `tau run`'s are: parsers, `--help`, the command
// framework's commands, the launcher and the argument lists one process builds for another all
// follow the tables (GATE-cli-declared-once).
import { Parser } from "@oclif/core";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import Attach from "../../../handwritten/cli/commands/attach.js";
import Resume from "../../../handwritten/cli/commands/resume.js";
import { launcherConstants } from "../../../handwritten/cli/launcher-script.js";
import { ownedDaemonArgs } from "../../../handwritten/cli/owned-daemon.js";
import { UI_COMMANDS, UI_USAGE, parseUiArgs } from "../../../handwritten/cli/tui/flags.js";
import { parseDaemonArgs } from "../../../handwritten/harness/daemon-start.js";
import { DAEMON_FLAGS, flagArgs, type FlagSpec } from "../../../handwritten/startup/index.js";
import { runTau } from "../../support/run-tau.js";
import { TAU_BIN } from "../../support/paths.js";

const daemonTable = Object.entries(DAEMON_FLAGS) as Array<[keyof typeof DAEMON_FLAGS, FlagSpec]>;

describe("tau daemon's flags", () => {
  it("[daemon.flags.one-table] the daemon's parser reads every flag of the table, and what a launcher builds from the table reads back as it was built", () => {
    const built = flagArgs(DAEMON_FLAGS, {
      "session-id": "s-abc-000000000000",
      "project-root": "/srv/project",
      "exit-when-uis-leave": true,
      detach: true,
      "harness-config": ["a=1", "b.c=2"],
      print: "tools",
      "print-text": "hello",
      "mcp-servers-file": "/run/tau/acp-mcp.json",
    });
    for (const [name, f] of daemonTable) {
      if (name === "resume" || name === "ephemeral" || name === "handoff-seed") continue; // refused together with session-id: read below
      expect(built, name).toContain(`--${name}`);
      if (f.multiple) expect(built.filter((a) => a === `--${name}`), name).toHaveLength(2);
    }
    expect(parseDaemonArgs(built, "/cwd")).toEqual({
      sessionId: "s-abc-000000000000",
      projectRoot: "/srv/project",
      exitWhenUisLeave: true,
      detach: true,
      ephemeral: false,
      overrides: ["a=1", "b.c=2"],
      print: "tools",
      printText: "hello",
      mcpServersFile: "/run/tau/acp-mcp.json",
    });
    // A handoff's replacement killed while it took its seed is resumed with the seed (SPEC-handoff); an ephemeral one has nothing to seed.
    expect(parseDaemonArgs(flagArgs(DAEMON_FLAGS, { resume: "s-old", "handoff-seed": "seed.json" }), "/cwd")).toMatchObject({ resume: "s-old", handoffSeed: "/cwd/seed.json" });
    expect(() => parseDaemonArgs(flagArgs(DAEMON_FLAGS, { ephemeral: true, "handoff-seed": "seed.json" }), "/cwd")).toThrow("--handoff-seed starts a persisted session");
    expect(() => parseDaemonArgs(flagArgs(DAEMON_FLAGS, { resume: "s-old", ephemeral: true }), "/cwd")).toThrow("--resume cannot be combined with --session-id or --ephemeral");
    expect(parseDaemonArgs(flagArgs(DAEMON_FLAGS, { ephemeral: true }), "/cwd")).toMatchObject({ ephemeral: true });
    expect(parseDaemonArgs(flagArgs(DAEMON_FLAGS, { "handoff-seed": "seed.json" }), "/cwd")).toMatchObject({ handoffSeed: "/cwd/seed.json" });
    expect(parseDaemonArgs(flagArgs(DAEMON_FLAGS, { resume: "s-old" }), "/cwd")).toMatchObject({ resume: "s-old" });
    // The owned daemon of `tau` and `tau run` gets its arguments from the same table.
    const owned = parseDaemonArgs(ownedDaemonArgs("s-new", { ephemeral: true, overrides: ["x=1"] }), "/cwd");
    expect(owned).toMatchObject({ sessionId: "s-new", ephemeral: true, exitWhenUisLeave: true, overrides: ["x=1"], projectRoot: process.cwd() });
    // Anything the table does not declare, a value a flag does not take, or a missing value is refused.
    expect(() => parseDaemonArgs(["--bogus"], "/cwd")).toThrow('unknown daemon argument "--bogus"');
    expect(() => parseDaemonArgs(["--print", "everything"], "/cwd")).toThrow("--print takes system-prompt, tools or prompt");
    expect(() => parseDaemonArgs(["--project-root", "--detach"], "/cwd")).toThrow("--project-root needs a value");
  });

  it("[daemon.flags.one-table] tau daemon --help lists every flag a user may give, from the table, and none of tau's own", async () => {
    const r = await runTau(["daemon", "--help"]);
    expect(r.code).toBe(0);
    for (const [name, f] of daemonTable) {
      if (f.hidden) expect(r.stdout, name).not.toContain(`--${name} `);
      else expect(r.stdout, name).toMatch(new RegExp(`--${name}${f.type === "string" ? ` ${f.value}` : ""} +${f.description.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    }
  });
});

describe("the interactive UI's flags", () => {
  it("[tui.flags.one-table] attach and resume in the command framework have exactly the table's flags and arguments", () => {
    for (const [cmd, name] of [
      [Attach, "attach"],
      [Resume, "resume"],
    ] as const) {
      const row = UI_COMMANDS[name];
      expect(Object.keys(cmd.flags ?? {})).toEqual(Object.keys(row.flags));
      expect(Object.keys(cmd.args ?? {})).toEqual(row.args.map((a) => a.name));
      for (const a of row.args) expect((cmd.args as Record<string, { description?: string }>)[a.name]?.description).toBe(a.description);
      expect(cmd.summary).toBe(row.summary);
    }
  });

  it("[tui.flags.one-table] the UI's parser reads each command's row as the command framework does, and refuses the rest", async () => {
    for (const [name, cmd] of [
      ["attach", Attach],
      ["resume", Resume],
    ] as const) {
      for (const argv of [[], ["s-abc"], ...(name === "resume" ? [["s-abc", "--fork"], ["--fork"]] : [])]) {
        const parsed = parseUiArgs([name, ...argv]);
        const { args, flags } = await Parser.parse(argv, { flags: cmd.flags as Record<string, never>, args: cmd.args, strict: true });
        expect(parsed).toEqual({ kind: "run", command: name, overrides: [], ...(args.session ? { session: args.session } : {}), ...((flags as { fork?: boolean }).fork ? { fork: true } : {}) });
      }
      if (name === "attach") expect(parseUiArgs([name, "--fork"])).toMatchObject({ kind: "refused" });
      expect(parseUiArgs([name, "s-1", "s-2"])).toMatchObject({ kind: "refused" });
      await expect(Parser.parse(["s-1", "s-2"], { flags: cmd.flags as Record<string, never>, args: cmd.args, strict: true })).rejects.toThrow();
    }
    expect(parseUiArgs(["--harness-config", "a=1", "--harness-config", "b=2"])).toEqual({ kind: "run", command: "start", overrides: ["a=1", "b=2"] });
    expect(parseUiArgs(["--bogus"])).toEqual({ kind: "refused", message: `unexpected argument "--bogus"\n${UI_USAGE}` });
    expect(UI_USAGE).toBe("usage: tau [--harness-config KEY=VALUE]… | tau attach [SESSION] | tau resume [--fork] [SESSION]");
  });

  it("[tui.flags.one-table] the launcher hands the UI what the table names: its commands, and `tau` with one of its flags first", () => {
    const constants = launcherConstants();
    expect(constants.uiFlags).toEqual(Object.keys(UI_COMMANDS.start.flags).map((n) => `--${n}`));
    expect(constants.uiCommands).toEqual(["attach", "resume"]);
    const bin = readFileSync(TAU_BIN, "utf8");
    expect(bin).toContain(`  uiFlags: [${(constants.uiFlags as string[]).map((f) => JSON.stringify(f)).join(", ")}],`);
    expect(bin).toContain("LAUNCH.uiFlags.includes(argv[0]) || (LAUNCH.uiCommands.includes(argv[0]) && !helpWanted)");
  });
});
