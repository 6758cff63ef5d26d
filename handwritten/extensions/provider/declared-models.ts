// Which models a provider declares from its configuration and the server's listing
// (SPEC-provider-chat-completions, "The default model"). Types only: the extension's entry imports
// this without the HTTP client.
import type { ModelInfo } from "../../../generated/index.js";

/** The model of an endpoint with nothing configured and no usable listing. */
export const FALLBACK_MODEL = "gpt-4o-mini";

export type ModelListingResult =
  | { readonly ok: true; readonly models: ModelInfo[]; readonly skipped: number }
  /** `unusable`: the failure says the endpoint will not answer prompts either (its key refused, nothing listening): the user is told at once. */
  | { readonly ok: false; readonly reason: string; readonly unusable?: "key" | "unreachable" };

/**
 * The models a provider declares once its listing is read: the configured ones first (the first is
 * the default), each marked whether the server lists it, then the listed ones not configured, in the
 * server's order. Without a usable listing: the configured ones, or FALLBACK_MODEL when none is.
 */
export function declaredModels(configured: readonly ModelInfo[], listing: ModelListingResult): { models: ModelInfo[]; listing: "listed" | "configured" } {
  if (!listing.ok) return { models: configured.length > 0 ? [...configured] : [{ id: FALLBACK_MODEL }], listing: "configured" };
  const listed = new Map(listing.models.map((m) => [m.id, m]));
  const own = new Set(configured.map((m) => m.id));
  const models: ModelInfo[] = configured.map((m) => ({ ...listed.get(m.id), ...m, listed: listed.has(m.id) }));
  for (const m of listing.models) if (!own.has(m.id)) models.push(m);
  return { models: models.slice(0, 1024), listing: "listed" };
}
