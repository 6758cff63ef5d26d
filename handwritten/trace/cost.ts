// Estimated cost of a provider round (SPEC-trace-export, "Cost"). The harness's own figure wins when
// it recorded one (`cost` of provider.response_finished: the rates then in effect). Otherwise the
// round is priced from what the caller knows of the model now (tau's model table and the
// configuration's `model_info`, passed in by the command: this folder reads no configuration).
import type { Usage } from "../../generated/index.js";

/** USD per million tokens; cached input falls back to the input price. */
export interface ModelPrice {
  input_cost?: number;
  output_cost?: number;
  cached_input_cost?: number;
}

/** What is known of a model's prices, or undefined. */
export type PriceOf = (model: string) => ModelPrice | undefined;

/** Memoises `priceOf` per model id (a journal names few models, many times). */
export class PriceTable {
  private readonly known = new Map<string, ModelPrice | undefined>();
  constructor(private readonly priceOf?: PriceOf) {}
  get(model: string): ModelPrice | undefined {
    if (!this.priceOf) return undefined;
    if (!this.known.has(model)) this.known.set(model, this.priceOf(model));
    return this.known.get(model);
  }
}

export interface RoundCost {
  usd: number;
  /** `journal`: as the harness recorded it; `model_info`: estimated here from current prices. */
  source: "journal" | "model_info";
}

/**
 * A round's cost: the recorded one, else input (less cached reads) at the input price, cached reads
 * at the cached price and output at the output price, per million tokens; null without usage or
 * without any price.
 */
export function roundCost(prices: PriceTable, model: string | null, usage: Usage | undefined, recorded: { usd: number } | undefined): RoundCost | null {
  if (recorded !== undefined) return { usd: recorded.usd, source: "journal" };
  if (!usage || model === null) return null;
  const p = prices.get(model);
  if (!p || (p.input_cost === undefined && p.output_cost === undefined)) return null;
  const input = p.input_cost ?? 0;
  const cached = Math.min(usage.cache_read_tokens ?? 0, usage.input_tokens);
  const usd = (input * (usage.input_tokens - cached) + (p.cached_input_cost ?? input) * cached + (p.output_cost ?? 0) * usage.output_tokens) / 1_000_000;
  return { usd, source: "model_info" };
}
