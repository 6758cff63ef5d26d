import { describe, expect, it } from "vitest";
import { SKILL_USAGE, parseSkillCommand } from "../../../handwritten/cli/skill-command.js";

describe(":skill NAME [text]", () => {
  it("splits the name from the user's own text, keeping the text's inner lines", () => {
    expect(parseSkillCommand(":skill review")).toEqual({ name: "review" });
    expect(parseSkillCommand("  :skill   review   focus on tests  ")).toEqual({ name: "review", text: "focus on tests  " });
    expect(parseSkillCommand(":skill review\nline one\n  line two")).toEqual({ name: "review", text: "line one\n  line two" });
    expect(parseSkillCommand(":skill")).toEqual({ error: SKILL_USAGE });
    expect(parseSkillCommand(":skill   ")).toEqual({ error: SKILL_USAGE });
  });

  it("is not a skill command otherwise", () => {
    expect(parseSkillCommand(":skills x")).toBeUndefined();
    expect(parseSkillCommand("/skill x")).toBeUndefined();
    expect(parseSkillCommand("please :skill x")).toBeUndefined();
  });
});
