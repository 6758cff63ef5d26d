// Model metadata and choice as plain functions (SPEC-provider-chat-completions, "Models"): the built-in
// table's lookup, the merge order, close matches and the check of a chosen name.
import { describe, expect, it } from "vitest";
import { builtinModelInfo, checkModelChoice, closeMatches, editDistance, mergedModelInfo } from "../../../handwritten/config/models.js";
import { declaredModels, FALLBACK_MODEL } from "../../../handwritten/extensions/provider/declared-models.js";
import { completeLine } from "../../../handwritten/cli/tui/command-mode.js";

describe("model metadata", () => {
  it("[models.builtin-lookup] finds well-known ids exactly, behind a vendor prefix or with a version or date, and nothing else", () => {
    expect(builtinModelInfo("gpt-4o-mini")).toMatchObject({ context_window: 128_000, input_cost: 0.15, output_cost: 0.6, cached_input_cost: 0.075 });
    expect(builtinModelInfo("openai/GPT-4o-mini")).toEqual(builtinModelInfo("gpt-4o-mini"));
    expect(builtinModelInfo("gpt-4o-2024-08-06")).toEqual(builtinModelInfo("gpt-4o"));
    expect(builtinModelInfo("gpt-4o-mini-2024-07-18")).toEqual(builtinModelInfo("gpt-4o-mini"));
    expect(builtinModelInfo("claude-sonnet-4-5-20250929")).toEqual(builtinModelInfo("claude-sonnet-4-5"));
    expect(builtinModelInfo("llama3.1:8b")).toEqual({ context_window: 131_072 });
    expect(builtinModelInfo("meta-llama/Llama-3.3-70B-Instruct")).toEqual({ context_window: 131_072 });
    expect(builtinModelInfo("deepseek-reasoner")).toMatchObject({ max_output_tokens: 65_536 });
    // Another model that merely starts like a known one is not taken for it.
    expect(builtinModelInfo("gpt-4o-audio-preview")).toBeUndefined();
    expect(builtinModelInfo("o3-pro")).toBeUndefined();
    expect(builtinModelInfo("no-such-model")).toBeUndefined();
  });

  it("[models.metadata-merge] the configuration's entry for provider/id beats its entry for the id, which beats the provider, which beats the table", () => {
    expect(mergedModelInfo("p", { id: "gpt-4o" })).toEqual({ id: "gpt-4o", ...builtinModelInfo("gpt-4o") });
    expect(mergedModelInfo("p", { id: "gpt-4o", context_window: 64_000, listed: false })).toMatchObject({ context_window: 64_000, input_cost: 2.5, listed: false });
    const configured = { "gpt-4o": { context_window: 32_000, input_cost: 1 }, "p/gpt-4o": { input_cost: 0.5 }, "q/gpt-4o": { input_cost: 9 } };
    expect(mergedModelInfo("p", { id: "gpt-4o", context_window: 64_000 }, configured)).toMatchObject({ context_window: 32_000, input_cost: 0.5, output_cost: 10 });
    expect(mergedModelInfo("r", { id: "local" }, configured)).toEqual({ id: "local" });
  });
});

describe("choosing a model", () => {
  it("[models.close-matches] by edit distance (a third of the name, at least 2) or a shared prefix, best first, at most three", () => {
    expect(editDistance("fake-modle", "fake-model")).toBe(2);
    expect(editDistance("abc", "xyz", 1)).toBe(2); // stops once past the limit
    const ids = ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "o3", "deepseek-chat", "claude-sonnet-4-5"];
    expect(closeMatches("gpt4o", ids)).toEqual(["gpt-4o"]);
    expect(closeMatches("gpt-4o-m", ids)).toEqual(["gpt-4o", "gpt-4o-mini"]);
    expect(closeMatches("gpt-4", ["gpt-4o", "gpt-4.1", "gpt-4o-mini", "gpt-5"])).toEqual(["gpt-4o", "gpt-5", "gpt-4.1"]);
    expect(closeMatches("deepseek", ids)).toEqual(["deepseek-chat"]);
    expect(closeMatches("claude", ids)).toEqual(["claude-sonnet-4-5"]);
    expect(closeMatches("zzzzzz", ids)).toEqual([]);
    expect(closeMatches("GPT-4O", ids)[0]).toBe("gpt-4o");
  });

  it("[models.choice-check] refuses a name no complete list holds, with close matches; accepts while any list is open", () => {
    const models = [
      { provider: "provider", id: "fake-model" },
      { provider: "provider", id: "other-model" },
      { provider: "work", id: "fake-model" },
      { provider: "work", id: "meta-llama/Llama-3.3-70B-Instruct" },
    ];
    const listed = { models, listed_providers: ["provider", "work"] };
    expect(checkModelChoice("anything", { models: [] })).toEqual({ ok: true });
    expect(checkModelChoice("other-model", listed)).toEqual({ ok: true });
    expect(checkModelChoice("work/fake-model", listed)).toEqual({ ok: true });
    expect(checkModelChoice("meta-llama/Llama-3.3-70B-Instruct", listed)).toEqual({ ok: true });
    expect(checkModelChoice("fake-modl", listed)).toEqual({
      ok: false,
      suggestions: ["provider/fake-model", "work/fake-model"],
      message: 'unknown model "fake-modl": no provider lists it; close matches: provider/fake-model, work/fake-model',
    });
    expect(checkModelChoice("work/other-model", listed)).toMatchObject({ ok: false, message: 'unknown model "work/other-model": provider work does not list it, nor any name close to it' });
    expect(checkModelChoice("provider/fake-modle", listed)).toMatchObject({ ok: false, suggestions: ["provider/fake-model"] });
    // A provider whose list is open (configured, or its listing under way) may serve any name.
    expect(checkModelChoice("fake-modl", { models, listed_providers: ["provider"] })).toEqual({ ok: true });
    expect(checkModelChoice("work/unknown", { models, listed_providers: ["provider"] })).toEqual({ ok: true });
  });

  it("[models.declared-from-listing] configured models first, marked when unlisted, then the listing; without one the configured or the fallback", () => {
    const listing = { ok: true as const, skipped: 0, models: [{ id: "a", context_window: 10 }, { id: "b" }] };
    expect(declaredModels([], listing)).toEqual({ listing: "listed", models: [{ id: "a", context_window: 10 }, { id: "b" }] });
    expect(declaredModels([{ id: "b" }, { id: "x" }], listing)).toEqual({
      listing: "listed",
      models: [{ id: "b", listed: true }, { id: "x", listed: false }, { id: "a", context_window: 10 }],
    });
    expect(declaredModels([{ id: "a", context_window: 99 }], listing).models[0]).toEqual({ id: "a", context_window: 99, listed: true });
    const none = { ok: false as const, reason: "HTTP 404" };
    expect(declaredModels([{ id: "x" }], none)).toEqual({ listing: "configured", models: [{ id: "x" }] });
    expect(declaredModels([], none)).toEqual({ listing: "configured", models: [{ id: FALLBACK_MODEL }] });
  });

  it("[tui.model.completion] Tab completes a command's name and a model name after :model", () => {
    const models = [
      { provider: "provider", id: "other-model" },
      { provider: "provider", id: "other-mini" },
      { provider: "provider", id: "shared" },
      { provider: "work", id: "shared" },
    ];
    expect(completeLine(":mo", models)).toEqual({ text: ":model ", candidates: [] });
    expect(completeLine(":q", models)).toEqual({ text: ":quit", candidates: ["quit", "quit-session"] });
    expect(completeLine(":model oth", models)).toEqual({ text: ":model other-m", candidates: ["other-mini", "other-model"] });
    expect(completeLine(":model other-mo", models)).toEqual({ text: ":model other-model", candidates: [] });
    // An id two providers declare is offered qualified; a typed provider name selects its models.
    expect(completeLine(":model sh", models)).toEqual({ text: ":model sh", candidates: [] });
    expect(completeLine(":model ", models)?.candidates).toEqual(["other-mini", "other-model", "provider/shared", "work/shared"]);
    expect(completeLine(":model wo", models)).toEqual({ text: ":model work/shared", candidates: [] });
    expect(completeLine(":model provider/o", models)).toEqual({ text: ":model provider/other-m", candidates: ["provider/other-mini", "provider/other-model"] });
    expect(completeLine("hello", models)).toBeUndefined();
    expect(completeLine(":model a b", models)).toBeUndefined();
  });
});
