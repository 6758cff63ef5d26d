// The routing of extensions' colon commands (SPEC-extension-commands): the first live owner of a
// name keeps it, a run goes to the owner's connection only, only that connection may answer, and a
// gone owner or a silent one is answered for.
import { describe, expect, it, vi } from "vitest";
import { COMMAND_ANSWER_MS, ExtensionCommands } from "../../../handwritten/harness/extension-commands.js";
import type { WireMessage } from "../../../generated/index.js";

function registry() {
  const sent: Array<{ generation: number; message: WireMessage }> = [];
  const warnings: string[] = [];
  const sets: string[][] = [];
  const commands = new ExtensionCommands({
    send: (generation, message) => {
      sent.push({ generation, message });
      return "queued";
    },
    changed: (list) => void sets.push(list.map((c) => `${c.name}@${c.instance}`)),
    warn: (text) => void warnings.push(text),
  });
  return { commands, sent, warnings, sets };
}

const invokeId = (m: WireMessage): string => (m.message === "extension_command_invoke" ? m.payload.invoke_id : "");

describe("extension commands", () => {
  it("[ext.command.owner-only] the first owner keeps a name; a run reaches only its connection, and only that connection's answer counts", async () => {
    const { commands, sent, warnings, sets } = registry();
    commands.declare("gmail", 7, { name: "gmail", usage: ":gmail login", summary: "sign in", sensitive: true });
    commands.declare("other", 9, { name: "gmail", usage: ":gmail", summary: "a usurper" });
    expect(warnings).toEqual([expect.stringContaining('already offered by "gmail"')]);
    expect(sets).toEqual([["gmail@gmail"]]);
    const answer = commands.invoke("gmail", ["code", "4/secret"]);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.generation).toBe(7);
    expect(sent[0]?.message).toMatchObject({ message: "extension_command_invoke", payload: { name: "gmail", args: ["code", "4/secret"] } });
    const id = invokeId(sent[0]!.message);
    commands.answered(9, { invoke_id: id, level: "info", text: "forged" });
    commands.answered(7, { invoke_id: id, level: "info", text: "gmail: signed in" });
    expect(await answer).toEqual({ level: "info", text: "gmail: signed in" });
    expect(await commands.invoke("nosuch", [])).toMatchObject({ level: "error", text: "no extension of this session offers :nosuch" });
  });

  it("[ext.command.owner-gone] an owner that goes takes its commands and answers what waited for it; a silent one is answered for after the wait", async () => {
    vi.useFakeTimers();
    try {
      const { commands, sets } = registry();
      commands.declare("gmail", 7, { name: "gmail", usage: ":gmail", summary: "s" });
      const waiting = commands.invoke("gmail", ["login"]);
      commands.gone("gmail", 7);
      expect(await waiting).toMatchObject({ level: "error", text: 'extension "gmail" stopped before it answered' });
      expect(sets.at(-1)).toEqual([]);
      commands.declare("gmail", 8, { name: "gmail", usage: ":gmail", summary: "s" });
      const silent = commands.invoke("gmail", ["status"]);
      vi.advanceTimersByTime(COMMAND_ANSWER_MS);
      expect(await silent).toMatchObject({ level: "error", text: expect.stringContaining("did not answer :gmail within 30 s") });
    } finally {
      vi.useRealTimers();
    }
  });
});
