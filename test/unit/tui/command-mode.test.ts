import { describe, expect, it } from "vitest";
import { COMMAND_SPECS, REDACTED, draftText, historyText, parseInput, type CommandSpec } from "../../../handwritten/cli/tui/command-mode.js";

describe("command mode", () => {
  it("[cli.command-mode.classify] ':' is a command, '::' a literal prompt, '/' and '!' as specified", () => {
    expect(parseInput("  :quit")).toMatchObject({ kind: "command", spec: { name: "quit" }, args: [] });
    expect(parseInput(":agent name my helper")).toMatchObject({ kind: "command", args: ["name", "my helper"] });
    expect(parseInput(":skill review look at src/ please")).toMatchObject({ kind: "command", args: ["review", "look at src/ please"] });
    expect(parseInput("::quit now")).toEqual({ kind: "prompt", text: ":quit now", literal: true });
    expect(parseInput("  ::x")).toEqual({ kind: "prompt", text: "  :x", literal: true });
    // `/name` of a known command runs it; `//text` is the literal `/text`; any other `/text` is a prompt (DECISION-slash-commands).
    expect(parseInput("/help")).toMatchObject({ kind: "command", spec: { name: "help" }, args: [], slash: true });
    expect(parseInput("  /model gpt-x")).toMatchObject({ kind: "command", spec: { name: "model" }, args: ["gpt-x"], slash: true });
    expect(parseInput("/quit now")).toEqual({ kind: "error", message: "usage: :quit" });
    expect(parseInput("//help me")).toEqual({ kind: "prompt", text: "/help me", literal: false });
    expect(parseInput("/frobnicate the plan")).toEqual({ kind: "prompt", text: "/frobnicate the plan", literal: false });
    expect(parseInput("/etc/hosts has a typo")).toEqual({ kind: "prompt", text: "/etc/hosts has a typo", literal: false });
    expect(parseInput("/helpme")).toEqual({ kind: "prompt", text: "/helpme", literal: false });
    expect(parseInput("/")).toEqual({ kind: "prompt", text: "/", literal: false });
    expect(parseInput("what is :this")).toEqual({ kind: "prompt", text: "what is :this", literal: false });
    expect(parseInput("!ls -la")).toEqual({ kind: "shell", command: "ls -la", includeInContext: true });
    expect(parseInput("!!git status")).toEqual({ kind: "shell", command: "git status", includeInContext: false });
    expect(parseInput("   ")).toEqual({ kind: "empty" });
    // Failures are local, with the usage.
    expect(parseInput(":")).toMatchObject({ kind: "error" });
    expect(parseInput(":frobnicate x")).toMatchObject({ kind: "error", message: expect.stringContaining("unknown command :frobnicate") });
    expect(parseInput(":quit now")).toEqual({ kind: "error", message: "usage: :quit" });
    // `:agent NAME` names the agent to show (SPEC-agent-navigation); other commands keep their sub-commands.
    expect(parseInput(":agent fly")).toMatchObject({ kind: "command", args: ["fly"] });
    expect(parseInput(":agents fly")).toMatchObject({ kind: "error", message: expect.stringContaining("usage: :agents") });
    expect(parseInput(":agents")).toMatchObject({ kind: "command", args: [] });
    expect(parseInput(":sandbox fly")).toMatchObject({ kind: "error", message: expect.stringContaining("usage: :sandbox") });
    // :handoff alone starts one; a wrong subcommand is refused.
    expect(parseInput(":handoff")).toMatchObject({ kind: "command", args: [] });
    expect(parseInput(":handoff fly")).toMatchObject({ kind: "error", message: expect.stringContaining("usage: :handoff") });
    expect(parseInput(":skill")).toMatchObject({ kind: "error" });
    expect(parseInput("!")).toMatchObject({ kind: "error" });
    expect(parseInput("!!  ")).toMatchObject({ kind: "error" });
    for (const name of ["quit", "detach", "quit-session", "new", "agent", "model", "cancel", "skill", "set", "theme", "help"]) {
      expect(COMMAND_SPECS.some((s) => s.name === name), name).toBe(true);
    }
  });

  it("[cli.command-mode.sensitive-redacted] sensitive arguments never reach history, echo or drafts; '::' is kept as typed", () => {
    const login: CommandSpec = { name: "login", usage: ":login CODE", summary: "", min: 1, max: 1, sensitive: true };
    const specs = [...COMMAND_SPECS, login];
    const parsed = parseInput(":login sk-secret-123", specs);
    expect(parsed.kind).toBe("command");
    expect(historyText(":login sk-secret-123", parsed)).toBe(`:login ${REDACTED}`);
    expect(draftText(":login sk-secret-123")).toBe(":login");
    // Typed wrong, it may still hold the secret: its usage is shown, its words are not kept.
    const wrong = parseInput(":login sk-secret-123 and more", specs);
    expect(wrong).toMatchObject({ kind: "error", message: "usage: :login CODE" });
    expect(historyText(":login sk-secret-123 and more", wrong)).toBe(`:login ${REDACTED}`);
    // An unknown command may be an extension's not offered yet: its words are not kept either.
    expect(historyText(":gmail code 4/0Ab-secret", parseInput(":gmail code 4/0Ab-secret", COMMAND_SPECS))).toBe(`:gmail ${REDACTED}`);
    expect(historyText(":frobnicate", parseInput(":frobnicate"))).toBe(":frobnicate");
    expect(draftText("::not a command")).toBe("::not a command");
    expect(draftText("/model secret-model-name")).toBe("/model");
    expect(draftText("//model is text")).toBe("//model is text");
    expect(historyText("::literal", parseInput("::literal"))).toBe("::literal");
    expect(historyText(":model gpt-x", parseInput(":model gpt-x"))).toBe(":model gpt-x");
  });
});

describe(":compact", () => {
  it("takes optional instructions, the rest of the line verbatim", () => {
    const plain = parseInput(":compact");
    expect(plain).toMatchObject({ kind: "command", spec: { name: "compact" }, args: [] });
    expect(parseInput(":compact keep the file names,  and the errors")).toMatchObject({ kind: "command", args: ["keep the file names,  and the errors"] });
  });
});
