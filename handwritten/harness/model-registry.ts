// The model registry (SPEC-provider-chat-completions, "Model listing" and "Choosing a model"): the
// models each live provider connection declares and what its listing is, what is published about
// them, and which provider instance serves a model name.
import type { Committed } from "../bus/index.js";
import type { EventName, EventPayloads, ModelInfo, ModelListing, ModelMetadata } from "../../generated/index.js";
import { checkModelChoice, closeMatches, mergedModelInfo } from "../config/models.js";
import { fitText } from "../protocol/text.js";

/**
 * Longest a prompt whose model is not declared waits for providers' model listings under way
 * (`listing: pending`) before its model is resolved without them (a listing itself gives up sooner).
 */
export const MODEL_LISTING_WAIT_MS = 10_000;

/** Where a prompt goes: the model id sent and the provider instance that serves it. */
export type Target = { readonly model: string; readonly instance: string };
/** Why no provider can take a prompt. */
export type Refusal = { readonly code: "no_provider" | "unknown_model"; readonly diagnostic: string };

export interface ModelRegistryPort {
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<boolean>;
  /** Generation of the live connection of an instance. */
  generationOf(instance: string): number | undefined;
  defaultModel(): string | undefined;
  /** Without a default model: the provider instance whose first declared model is the default. */
  defaultProvider?(): string | undefined;
  /** Model metadata from the configuration (`model_info`), by model id or `provider/model`. */
  modelInfo?(): Readonly<Record<string, ModelMetadata>> | undefined;
  /** `contextWindow`: the window of models whose provider declares none. */
  readonly compaction: { readonly contextWindow?: number };
}

export class ModelRegistry {
  /** model id → provider instance and model info, from provider.models_updated. */
  private readonly models = new Map<string, { instance: string; info: ModelInfo }>();
  private readonly modelsByInstance = new Map<string, ModelInfo[]>();
  /** The connection generation whose declaration `modelsByInstance` holds, per instance. */
  private readonly modelsGeneration = new Map<string, number>();
  /** Every model's info as last declared, kept when its provider leaves: usage so far stays priced. */
  private readonly lastDeclared = new Map<string, ModelInfo>();
  /** What each declaring instance's list is (SPEC-provider-chat-completions, "Model listing"). */
  private readonly listings = new Map<string, ModelListing>();
  /** `instance/id` of unlisted configured models already warned about. */
  private readonly warnedUnlisted = new Set<string>();
  /** Dispatches waiting for the listings under way. */
  private listingWaiters: Array<() => void> = [];
  /** Settles once the daemon's extensions have started (or failed to); absent when none are starting. */
  private extensionsStarting: Promise<void> | undefined;

  constructor(
    private readonly port: ModelRegistryPort,
    /** Models were declared: prices and context windows may have come with them. */
    private readonly declared: () => void,
  ) {}

  onModelsDeclared(c: Committed<"provider.models_declared">): void {
    const instance = c.publisher.instance;
    if (instance === undefined || c.publisher.generation === undefined || this.port.generationOf(instance) !== c.publisher.generation) return;
    this.modelsGeneration.set(instance, c.publisher.generation);
    this.setModels(instance, c.data.models.slice(0, 1024), c.data.listing ?? "configured");
    if (c.data.problem !== undefined) void this.port.publish("harness.notice", { level: "warning", text: fitText(`provider ${instance}: ${c.data.problem}`), mandatory: true, instance });
    this.declared();
  }

  /** A provider connection ended: its models leave with it (a respawned process declares them again). */
  providerGone(instance: string, generation: number): void {
    if (this.modelsGeneration.get(instance) !== generation) return;
    this.modelsGeneration.delete(instance);
    this.setModels(instance, [], undefined);
  }

  /**
   * The daemon's extensions are starting (their `extension.ready` is not published yet): prompts
   * submitted meanwhile wait for the start to settle instead of finding no provider.
   */
  whileExtensionsStart(started: Promise<unknown>): void {
    const settled: Promise<void> = started.then(
      () => undefined,
      () => undefined,
    );
    this.extensionsStarting = settled;
    void settled.then(() => {
      if (this.extensionsStarting === settled) this.extensionsStarting = undefined;
    });
  }

  /** Settles once the extensions started, while they are starting. */
  get starting(): Promise<void> | undefined {
    return this.extensionsStarting;
  }

  /** Resolves once no model listing is under way, or after `ms`. */
  listingsSettled(ms: number): Promise<void> {
    if (!this.listingPending()) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.listingWaiters.push(done);
    });
  }

  /**
   * The model and provider instance of an agent's next prompt, for the model it chose (if any)
   * (SPEC-provider-chat-completions, "Choosing a model"), `wait` while a listing under way could
   * decide it (never once `waited`), or why none can serve it.
   */
  resolve(chosen: string | undefined, waited: boolean): Target | "wait" | Refusal {
    const wanted = chosen ?? this.port.defaultModel();
    if (wanted !== undefined) return this.route(wanted, waited);
    const provider = this.port.defaultProvider?.();
    if (provider !== undefined) {
      const own = this.modelsByInstance.get(provider)?.[0];
      if (own !== undefined) return { model: own.id, instance: provider };
      // Its models are not in yet: its listing is under way.
      if (!waited && this.listings.get(provider) === "pending") return "wait";
    }
    const first = [...this.models.entries()].sort(([a], [b]) => (a < b ? -1 : 1))[0];
    if (first) return { model: first[0], instance: first[1].instance };
    if (!waited && this.listingPending()) return "wait";
    return { code: "no_provider", diagnostic: "no model is available; configure a provider" };
  }

  /** Where a prompt for the model chosen would go now, if anywhere (no waiting for listings). */
  current(chosen: string | undefined): Target | undefined {
    const r = this.resolve(chosen, true);
    return r !== "wait" && "instance" in r ? r : undefined;
  }

  /** Routes a model name: a declared id, `provider/model`, or an id a provider with an open list may serve. */
  route(wanted: string, waited: boolean): Target | "wait" | Refusal {
    // Ids may hold a `/` themselves (`meta-llama/Llama-3.3-70B-Instruct`): a declared one is taken whole.
    const whole = this.models.get(wanted);
    if (whole) return { model: wanted, instance: whole.instance };
    const slash = wanted.indexOf("/");
    const inst = slash > 0 ? wanted.slice(0, slash) : undefined;
    if (inst !== undefined && this.port.generationOf(inst) !== undefined) {
      const id = wanted.slice(slash + 1);
      const listing = this.listings.get(inst);
      if (listing !== "listed" || this.modelsByInstance.get(inst)?.some((m) => m.id === id)) {
        if (listing === "pending" && !waited) return "wait";
        return { model: id, instance: inst };
      }
      return { code: "unknown_model", diagnostic: this.unknown(wanted) };
    }
    // An id no provider declares.
    if (!waited && this.listingPending()) return "wait";
    const open = [...this.listings].filter(([i, s]) => s !== "listed" && this.port.generationOf(i) !== undefined).map(([i]) => i);
    const preferred = this.port.defaultProvider?.();
    if (preferred !== undefined && open.includes(preferred)) return { model: wanted, instance: preferred };
    if (open.length === 1) return { model: wanted, instance: open[0] as string };
    if (open.length > 1) return { code: "no_provider", diagnostic: `several providers may serve model ${wanted}; choose one: ${open.map((i) => `${i}/${wanted}`).join(", ")}` };
    if (this.models.size === 0) return { code: "no_provider", diagnostic: `no running provider serves model ${wanted}` };
    return { code: "unknown_model", diagnostic: this.unknown(wanted) };
  }

  /** Whether a live provider declares a model of this exact id. */
  declares(model: string): boolean {
    return this.models.has(model);
  }

  /** A model's info as its live provider declares it now. */
  info(model: string): ModelInfo | undefined {
    return this.models.get(model)?.info;
  }

  /** A model's info as last declared, also after its provider left (for pricing usage so far). */
  lastInfo(model: string): ModelInfo | undefined {
    return this.lastDeclared.get(model);
  }

  /** The model's context window: what its provider declares, else the configured one. */
  contextWindow(model: string | undefined): number | undefined {
    const declared = model === undefined ? undefined : this.lastDeclared.get(model)?.context_window;
    return declared ?? this.port.compaction.contextWindow;
  }

  private listingPending(): boolean {
    return [...this.listings.values()].includes("pending");
  }

  /**
   * Replaces one instance's models (`listing` undefined: it left), with what is known of each
   * merged in, and republishes what is available.
   */
  private setModels(instance: string, declared: ModelInfo[], listing: ModelListing | undefined): void {
    const configured = this.port.modelInfo?.();
    const models = declared.map((m) => mergedModelInfo(instance, m, configured));
    if (listing === undefined) this.listings.delete(instance);
    else this.listings.set(instance, listing);
    if (models.length > 0) this.modelsByInstance.set(instance, models);
    else this.modelsByInstance.delete(instance);
    for (const [id, m] of [...this.models]) if (m.instance === instance) this.models.delete(id);
    for (const info of models) this.models.set(info.id, { instance, info });
    for (const info of models) this.lastDeclared.set(info.id, info);
    if (listing === "listed") this.warnUnlisted(instance, models);
    void this.port.publish("provider.models_updated", { instance, models, ...(listing !== undefined && listing !== "configured" ? { listing } : {}) });
    const all = [...this.modelsByInstance.entries()].flatMap(([provider, list]) => list.map((m) => ({ provider, ...m })));
    const listed = [...this.listings].filter(([, s]) => s === "listed").map(([i]) => i);
    // The model an agent without its own goes to (as `resolve` picks it), for UIs to show before a prompt.
    const fallback = this.port.defaultProvider?.();
    const defaultModel = this.port.defaultModel() ?? (fallback !== undefined ? this.modelsByInstance.get(fallback)?.[0]?.id : undefined) ?? [...this.models.keys()].sort()[0];
    void this.port.publish("harness.models_available", {
      models: all.slice(0, 4096),
      ...(listed.length > 0 ? { listed_providers: listed.slice(0, 256) } : {}),
      ...(defaultModel !== undefined ? { default_model: defaultModel } : {}),
    });
    if (!this.listingPending()) for (const wake of this.listingWaiters.splice(0)) wake();
  }

  /**
   * One warning per configured model the server's listing does not name (a model the provider
   * was configured with, or the configuration's `model` when it names this provider), with the
   * close matches among the listed ones. It is mandatory, so a UI attaching later sees it too.
   */
  private warnUnlisted(instance: string, models: readonly ModelInfo[]): void {
    const listed = models.filter((m) => m.listed !== false).map((m) => m.id);
    const unlisted = models.filter((m) => m.listed === false).map((m) => m.id);
    const configured = this.port.defaultModel();
    if (configured !== undefined) {
      const slash = configured.indexOf("/");
      // `other/model` may name another provider whose listing is not in yet: only a bare id is taken
      // to be this provider's when it is the only one so far.
      const id = slash > 0 && configured.slice(0, slash) === instance ? configured.slice(slash + 1) : slash < 0 && this.modelsByInstance.size === 1 ? configured : undefined;
      if (id !== undefined && !listed.includes(id) && !unlisted.includes(id)) unlisted.push(id);
    }
    const lines: string[] = [];
    for (const id of unlisted) {
      if (this.warnedUnlisted.has(`${instance}/${id}`)) continue;
      this.warnedUnlisted.add(`${instance}/${id}`);
      const close = closeMatches(id, listed);
      lines.push(`${JSON.stringify(id.slice(0, 200))}${close.length > 0 ? ` (close matches: ${close.join(", ")})` : ""}`);
    }
    if (lines.length === 0) return;
    const text = `provider ${instance}: the server does not list the configured model${lines.length > 1 ? "s" : ""} ${lines.join(", ")}; requests for ${lines.length > 1 ? "them" : "it"} are still sent`;
    void this.port.publish("harness.notice", { level: "warning", text: fitText(text), mandatory: true, instance });
  }

  /** Why a model no listing names is refused, with its close matches. */
  private unknown(wanted: string): string {
    const models = [...this.modelsByInstance.entries()].flatMap(([provider, list]) => list.map((m) => ({ provider, id: m.id })));
    const listed = [...this.listings].filter(([, s]) => s === "listed").map(([i]) => i);
    const choice = checkModelChoice(wanted, { models, listed_providers: listed });
    return choice.ok ? `no running provider serves model ${wanted}` : choice.message;
  }
}
