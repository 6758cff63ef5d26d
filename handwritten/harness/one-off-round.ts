// What the harness's one-off, tool-less rounds for an extension share (the permission reviewer,
// SPEC-sandbox-reviewer; an MCP server's sampling, SPEC-mcp): the provider that serves the asked
// model — never another one silently — and a round 0 that is cancelled at its provider when it
// cannot be sent whole or outlives its timeout.
import type { EventName, EventPayloads } from "../../generated/index.js";
import type { ProviderCall } from "../protocol/provider-request.js";
import type { Round } from "./round-router.js";
import type { ModelRegistry } from "./model-registry.js";

/** What a one-off round needs of the harness. */
export interface OneOffPort {
  directToInstance<N extends EventName>(instance: string, name: N, data: EventPayloads[N]): boolean;
  sendProviderCall(instance: string, generation: number, call: ProviderCall): Promise<string | undefined>;
  generationOf(instance: string): number | undefined;
}

/** Where a round for a model goes: its provider's live connection and the model id it knows. */
export interface ServingProvider {
  readonly instance: string;
  readonly generation: number;
  readonly model: string;
}

/**
 * The running provider that serves `wanted`: a model one declares, or `provider/model` of a running
 * provider. An id no provider declares is never handed to another provider, which would switch the
 * model silently; undefined when none serves it.
 */
export function servingProvider(wanted: string, models: Pick<ModelRegistry, "declares" | "route">, port: Pick<OneOffPort, "generationOf">): ServingProvider | undefined {
  const slash = wanted.indexOf("/");
  if (!models.declares(wanted) && (slash <= 0 || port.generationOf(wanted.slice(0, slash)) === undefined)) return undefined;
  const target = models.route(wanted, true);
  if (typeof target !== "object" || !("instance" in target)) return undefined;
  const generation = port.generationOf(target.instance);
  return generation === undefined ? undefined : { instance: target.instance, generation, model: target.model };
}

/** Asks the provider to stop a one-off round (it may be streaming still). */
export function cancelOneOff(port: Pick<OneOffPort, "directToInstance">, r: Round): void {
  port.directToInstance(r.instance, "provider.cancel_request", { prompt_id: r.promptId, round: 0 });
}

/** A timer that cancels the round at its provider and then ends it, after `ms`. */
export function oneOffTimeout<R extends Round>(port: Pick<OneOffPort, "directToInstance">, ms: number, current: () => R | undefined, end: (r: R) => void): NodeJS.Timeout {
  return setTimeout(() => {
    const r = current();
    if (r === undefined) return;
    cancelOneOff(port, r);
    end(r);
  }, ms);
}

/**
 * Sends the round's call; when it could not be sent whole and the round is still open, what reached
 * the provider is cancelled. Resolves true when it was sent.
 */
export async function sendOneOff(port: OneOffPort, r: Round, call: ProviderCall, stillOpen: () => boolean): Promise<boolean> {
  const problem = await port.sendProviderCall(r.instance, r.generation, call);
  if (problem === undefined) return true;
  if (stillOpen()) cancelOneOff(port, r);
  return false;
}
