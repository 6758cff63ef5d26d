import { describe, expect, it } from "vitest";
import { NO_PROMPT, headlessPrompt, parseRunArgs } from "../../../handwritten/cli/run/index.js";

describe("a headless prompt is read as the interactive UI reads a line", () => {
  it("[run.colon.headless-reading] text, ::escapes, :skill, refusals and an empty prompt", () => {
    expect(headlessPrompt("fix the test", undefined)).toEqual({ ok: true, prompt: { text: "fix the test", literal: false } });
    // `/NAME` of a known command is that command; `//` sends a literal `/`; any other `/text` is text (DECISION-slash-commands).
    expect(headlessPrompt("//help is text", undefined)).toEqual({ ok: true, prompt: { text: "/help is text", literal: false } });
    expect(headlessPrompt("/helpful is text", undefined)).toEqual({ ok: true, prompt: { text: "/helpful is text", literal: false } });
    expect(headlessPrompt("/skill review look", undefined)).toEqual({ ok: true, prompt: { text: "look", literal: false }, skill: "review" });
    expect(headlessPrompt("/cancel", undefined)).toEqual({ ok: false, code: "TAU-E0103", message: "tau run: /cancel is a command of the interactive UI (tau), not a prompt; '//cancel' sends it to the model as text" });
    expect(headlessPrompt("  ::quit now", undefined)).toEqual({ ok: true, prompt: { text: "  :quit now", literal: true } });
    expect(headlessPrompt(":skill review look at src/", undefined)).toEqual({ ok: true, prompt: { text: "look at src/", literal: false }, skill: "review" });
    expect(headlessPrompt(":skill review", undefined)).toEqual({ ok: true, prompt: { text: "", literal: false }, skill: "review" });
    expect(headlessPrompt(":skill other", "review")).toEqual({ ok: false, code: "TAU-E0105", message: "tau run: give the skill once, with --skill NAME or :skill NAME" });
    expect(headlessPrompt(":cancel", undefined)).toEqual({ ok: false, code: "TAU-E0103", message: "tau run: :cancel is a command of the interactive UI (tau), not a prompt; '::cancel' sends it to the model as text" });
    expect(headlessPrompt(":help extra words", undefined)).toEqual({ ok: false, code: "TAU-E0104", message: "tau run: usage: :help [COMMAND]" });
    expect(headlessPrompt("   ", undefined)).toEqual({ ok: false, code: "TAU-E0102", message: NO_PROMPT });
    expect(headlessPrompt("", "review")).toEqual({ ok: true, prompt: { text: "", literal: false }, skill: "review" });
    expect(parseRunArgs(["-p", ":model m"])).toEqual({ ok: false, code: "TAU-E0103", message: "tau run: :model is a command of the interactive UI (tau), not a prompt; '::model' sends it to the model as text" });
    expect(parseRunArgs(["-p", ":skill s hi", "--json"])).toMatchObject({ ok: true, args: { prompt: { text: "hi", literal: false }, options: { skill: "s", json: true } } });
  });
});
