// What is known of models and how one is chosen (SPEC-provider-chat-completions, "Models"): the
// built-in metadata table, its merge with what a provider declares and what the configuration says,
// and the check of a model name against the models the providers offer, with close matches.
//
// Plain data and small functions: `tau run`'s fast bundle and the interactive UI import this file
// directly, without the configuration loader.
import type { ModelInfo, ModelMetadata } from "../../generated/index.js";

/** A metadata row of the built-in table. */
type Row = Readonly<ModelMetadata>;

/**
 * Well-known models (approximate, as published by their vendors around October 2025; prices in
 * USD per million tokens, list prices without batch or tier discounts). The configuration's
 * `model_info` overrides any of it. Keys are lowercase ids without a vendor prefix.
 */
const BUILTIN: Readonly<Record<string, Row>> = {
  // OpenAI
  "gpt-4o": { context_window: 128_000, max_output_tokens: 16_384, input_cost: 2.5, output_cost: 10, cached_input_cost: 1.25 },
  "gpt-4o-mini": { context_window: 128_000, max_output_tokens: 16_384, input_cost: 0.15, output_cost: 0.6, cached_input_cost: 0.075 },
  "gpt-4.1": { context_window: 1_047_576, max_output_tokens: 32_768, input_cost: 2, output_cost: 8, cached_input_cost: 0.5 },
  "gpt-4.1-mini": { context_window: 1_047_576, max_output_tokens: 32_768, input_cost: 0.4, output_cost: 1.6, cached_input_cost: 0.1 },
  "gpt-4.1-nano": { context_window: 1_047_576, max_output_tokens: 32_768, input_cost: 0.1, output_cost: 0.4, cached_input_cost: 0.025 },
  "gpt-5": { context_window: 400_000, max_output_tokens: 128_000, input_cost: 1.25, output_cost: 10, cached_input_cost: 0.125 },
  "gpt-5-mini": { context_window: 400_000, max_output_tokens: 128_000, input_cost: 0.25, output_cost: 2, cached_input_cost: 0.025 },
  o3: { context_window: 200_000, max_output_tokens: 100_000, input_cost: 2, output_cost: 8, cached_input_cost: 0.5 },
  "o3-mini": { context_window: 200_000, max_output_tokens: 100_000, input_cost: 1.1, output_cost: 4.4, cached_input_cost: 0.55 },
  "o4-mini": { context_window: 200_000, max_output_tokens: 100_000, input_cost: 1.1, output_cost: 4.4, cached_input_cost: 0.275 },
  // DeepSeek
  "deepseek-chat": { context_window: 128_000, max_output_tokens: 8_192, input_cost: 0.28, output_cost: 0.42, cached_input_cost: 0.028 },
  "deepseek-reasoner": { context_window: 128_000, max_output_tokens: 65_536, input_cost: 0.28, output_cost: 0.42, cached_input_cost: 0.028 },
  // Mistral
  "mistral-large-latest": { context_window: 131_072, input_cost: 2, output_cost: 6 },
  "mistral-medium-latest": { context_window: 131_072, input_cost: 0.4, output_cost: 2 },
  "mistral-small-latest": { context_window: 131_072, input_cost: 0.1, output_cost: 0.3 },
  "codestral-latest": { context_window: 256_000, input_cost: 0.3, output_cost: 0.9 },
  // Anthropic, through its OpenAI-compatible endpoint
  "claude-sonnet-4-5": { context_window: 200_000, max_output_tokens: 64_000, input_cost: 3, output_cost: 15, cached_input_cost: 0.3 },
  "claude-sonnet-4": { context_window: 200_000, max_output_tokens: 64_000, input_cost: 3, output_cost: 15, cached_input_cost: 0.3 },
  "claude-opus-4-1": { context_window: 200_000, max_output_tokens: 32_000, input_cost: 15, output_cost: 75, cached_input_cost: 1.5 },
  "claude-haiku-4-5": { context_window: 200_000, max_output_tokens: 64_000, input_cost: 1, output_cost: 5, cached_input_cost: 0.1 },
  // Llama (Groq's hosted ids carry prices; local ones, as Ollama names them, only their context)
  "llama-3.3-70b-versatile": { context_window: 131_072, max_output_tokens: 32_768, input_cost: 0.59, output_cost: 0.79 },
  "llama-3.1-8b-instant": { context_window: 131_072, max_output_tokens: 131_072, input_cost: 0.05, output_cost: 0.08 },
  "llama-3.3-70b-instruct": { context_window: 131_072 },
  "llama-3.1-8b-instruct": { context_window: 131_072 },
  "llama3.1": { context_window: 131_072 },
  "llama3.2": { context_window: 131_072 },
  "llama3.3": { context_window: 131_072 },
};

/**
 * The built-in row for a model id: its part after the last `/`, lowercased, exactly; else the
 * longest key it extends with a version or date (`-` and a digit, `:` or `@`: `gpt-4o-2024-08-06`,
 * `llama3.1:8b`, `claude-sonnet-4@20250514`). Undefined for anything else.
 */
export function builtinModelInfo(id: string): ModelMetadata | undefined {
  const key = id.slice(id.lastIndexOf("/") + 1).toLowerCase();
  const exact = BUILTIN[key];
  if (exact !== undefined) return { ...exact };
  let best: string | undefined;
  for (const k of Object.keys(BUILTIN)) {
    if (!key.startsWith(k) || (best !== undefined && best.length >= k.length)) continue;
    if (/^(-\d|:|@)/.test(key.slice(k.length))) best = k;
  }
  return best === undefined ? undefined : { ...(BUILTIN[best] as Row) };
}

const METADATA_KEYS = ["context_window", "max_output_tokens", "input_cost", "output_cost", "cached_input_cost"] as const;

/** The metadata fields of `m` that are set. */
function metadataOf(m: ModelMetadata | undefined): ModelMetadata {
  const out: ModelMetadata = {};
  if (m === undefined) return out;
  for (const k of METADATA_KEYS) if (m[k] !== undefined) out[k] = m[k];
  return out;
}

/**
 * What is known of a model a provider instance declared: the built-in table, overridden by what the
 * provider declared, overridden by the configuration's `model_info` for the id, overridden by its
 * entry for `instance/id`.
 */
export function mergedModelInfo(instance: string, declared: ModelInfo, configured?: Readonly<Record<string, ModelMetadata>>): ModelInfo {
  return {
    ...metadataOf(builtinModelInfo(declared.id)),
    ...metadataOf(declared),
    ...metadataOf(configured?.[declared.id]),
    ...metadataOf(configured?.[`${instance}/${declared.id}`]),
    id: declared.id,
    ...(declared.listed !== undefined ? { listed: declared.listed } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Close matches

/** Most suggestions a message names. */
export const MAX_SUGGESTIONS = 3;

/** Levenshtein distance of two strings, or `limit + 1` once it is certain to exceed `limit`. */
export function editDistance(a: string, b: string, limit = Number.MAX_SAFE_INTEGER): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return limit + 1;
    prev = cur;
  }
  return prev[b.length] as number;
}

/**
 * The candidates closest to `name`, best first, at most MAX_SUGGESTIONS: those within an edit
 * distance of a third of the name's length (at least 2), and those one is a prefix of the other
 * (ignoring case; a prefix of at least 3 characters).
 */
export function closeMatches(name: string, candidates: Iterable<string>, limit = MAX_SUGGESTIONS): string[] {
  const n = name.toLowerCase();
  const bound = Math.max(2, Math.floor(n.length / 3));
  const scored: Array<[number, string]> = [];
  const seen = new Set<string>();
  for (const c of candidates) {
    if (seen.has(c)) continue;
    seen.add(c);
    const l = c.toLowerCase();
    const d = editDistance(n, l, bound);
    const prefix = Math.min(n.length, l.length) >= 3 && (l.startsWith(n) || n.startsWith(l));
    if (d <= bound) scored.push([d, c]);
    else if (prefix) scored.push([bound + 1, c]);
  }
  scored.sort(([da, a], [db, b]) => da - db || (a < b ? -1 : a > b ? 1 : 0));
  return scored.slice(0, limit).map(([, c]) => c);
}

// ---------------------------------------------------------------------------------------------
// Choosing a model

/** The models an attached client knows of (`harness.models_available`). */
export interface KnownModels {
  readonly models: readonly { readonly provider: string; readonly id: string }[];
  readonly listed_providers?: readonly string[];
}

export type ModelChoice = { readonly ok: true } | { readonly ok: false; readonly message: string; readonly suggestions: readonly string[] };

/**
 * Whether `name` (`model` or `provider/model`) may be chosen: accepted when nothing is known yet,
 * when a provider declares it, or when a provider whose list is not the server's own listing could
 * serve it; refused otherwise, with the close matches among the names that would be accepted.
 */
export function checkModelChoice(name: string, known: KnownModels): ModelChoice {
  if (known.models.length === 0) return { ok: true };
  if (known.models.some((m) => m.id === name)) return { ok: true };
  const listed = new Set(known.listed_providers ?? []);
  const providers = new Set(known.models.map((m) => m.provider));
  const slash = name.indexOf("/");
  const instance = slash > 0 ? name.slice(0, slash) : undefined;
  // The name each model is chosen by: its id alone where no other provider declares the same id.
  const owners = new Map<string, number>();
  for (const m of known.models) owners.set(m.id, (owners.get(m.id) ?? 0) + 1);
  const shown = (m: { provider: string; id: string }) => ((owners.get(m.id) ?? 0) > 1 ? `${m.provider}/${m.id}` : m.id);
  if (instance !== undefined && providers.has(instance)) {
    const id = name.slice(slash + 1);
    const own = known.models.filter((m) => m.provider === instance);
    if (own.some((m) => m.id === id) || !listed.has(instance)) return { ok: true };
    const suggestions = closeMatches(id, own.map((m) => m.id)).map((s) => `${instance}/${s}`);
    return { ok: false, message: refusal(name, `provider ${instance} does not list it`, suggestions), suggestions };
  }
  if ([...providers].some((p) => !listed.has(p))) return { ok: true };
  const byShown = new Map(known.models.map((m) => [shown(m), m.id]));
  const ids = closeMatches(name, new Set(known.models.map((m) => m.id)));
  const suggestions = [...byShown.entries()].filter(([, id]) => ids.includes(id)).sort(([, a], [, b]) => ids.indexOf(a) - ids.indexOf(b)).map(([s]) => s).slice(0, MAX_SUGGESTIONS);
  return { ok: false, message: refusal(name, "no provider lists it", suggestions), suggestions };
}

function refusal(name: string, why: string, suggestions: readonly string[]): string {
  const quoted = JSON.stringify(name.slice(0, 200));
  return suggestions.length > 0 ? `unknown model ${quoted}: ${why}; close matches: ${suggestions.join(", ")}` : `unknown model ${quoted}: ${why}, nor any name close to it`;
}
