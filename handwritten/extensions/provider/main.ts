// `tau ext provider` (kind provider): serves directed `provider.request`s with one profile —
// `chat_completions` (any OpenAI-compatible endpoint over HTTP + SSE), `responses` (the Responses
// API, streamed, stateless with encrypted reasoning carried back), `chatgpt_ws` (the Responses
// event stream over a WebSocket, signed in with ChatGPT; SPEC-provider-websocket) or `scripted`
// (offline demo) — and reports through the provider.*_reported family (SPEC-provider-execution).
import { mark } from "../../startup/timeline.js";
import { Extension } from "../../sdk/index.js";
import type { ModelInfo, ProviderSettings, ReasoningReplay } from "../../../generated/index.js";
import type { ProviderCall } from "../../protocol/provider-request.js";
import type { EgressPolicy } from "./index.js";
import { SCRIPTED_MODEL, scriptedTurn } from "./scripted.js";
import { readProxySettings } from "./proxy-settings.js";
import { declaredModels, type ModelListingResult } from "./declared-models.js";
import { DeltaBatcher } from "./delta-batcher.js";
import { statSync } from "node:fs";

export async function main(args: readonly string[] = []): Promise<void> {
  if (args[0] === "--list-models") {
    const { probeModels } = await import("./probe.js");
    process.exitCode = await probeModels();
    return;
  }
  if (args[0] === "--login") {
    const { signIn } = await import("./login.js");
    process.exitCode = await signIn();
    return;
  }
  const ext = await Extension.connect();
  // Its settings as spec/ declares them (ProviderSettings); a bad one is a config_error naming it.
  const cfg: ProviderSettings | undefined = ext.settings("provider");
  if (cfg === undefined) return;
  const profile = cfg.profile ?? "scripted";
  if (profile === "chatgpt_ws") {
    const { serveChatgptWs } = await import("./chatgpt-ws-main.js");
    return serveChatgptWs(ext, cfg);
  }
  const http = profile !== "scripted"; // the profiles that talk to a server over HTTP
  if (http && !cfg.base_url) return ext.configError(`${profile} needs base_url`);
  const models: ModelInfo[] = profile === "scripted" ? [{ id: SCRIPTED_MODEL, context_window: 32_000 }] : (cfg.models ?? []);
  // The server's listing is read once, after ready (SPEC-provider-chat-completions, "Model listing").
  const listing = http && cfg.list_models !== false;
  if (models.length === 0 && !listing) return ext.configError("no models configured for this provider");
  const apiKey = cfg.api_key_secret ? ext.configuration.secrets[cfg.api_key_secret] : undefined;
  if (http) {
    try {
      readProxySettings(); // an unusable proxy variable is a configuration error, before ready
    } catch (err) {
      return ext.configError(`proxy settings: ${(err as Error).message}`);
    }
  }
  const running = new Map<string, AbortController>();
  // The configured models at once (a prompt for one of them need not wait for the listing); while
  // the listing is read they are `pending`, and the declaration made from it replaces them.
  void ext.emit("provider.models_declared", { models, listing: profile === "scripted" ? "listed" : listing ? "pending" : "configured" });
  // The HTTP client (the wire client and the egress policy on node:http) is loaded only by the
  // profile that talks to a server, and only after ready is on its way: its start-up then overlaps
  // the harness's activation and the first prompt's set-up instead of delaying them.
  let client: Promise<{ http: HttpClient; egress: EgressPolicy }> | undefined;
  const loadClient = () =>
    (client ??= import("./index.js").then((http) => {
      mark("provider http loaded");
      const egress = http.createEgressPolicy({});
      // The first prompt's request then finds its connection (and TLS session) open. Best effort: a
      // base URL that cannot be used is reported by that request.
      try {
        egress.preconnect(http.endpointUrl(cfg.base_url as string, profile === "responses" ? "/responses" : "/chat/completions"));
      } catch {
        // reported by the first request
      }
      return { http, egress };
    }));
  ext.onDirect("provider.cancel_request", (data) => running.get(`${data.prompt_id}/${data.round}`)?.abort());
  ext.onProviderRequest((req) => {
    mark("provider request");
    const key = `${req.prompt_id}/${req.round}`;
    const controller = new AbortController();
    running.set(key, controller);
    const done = () => running.delete(key);
    if (profile === "scripted") void runScripted(ext, req, controller.signal).finally(done);
    else {
      const endpoint = { baseUrl: cfg.base_url as string, ...(apiKey ? { apiKey } : {}), ...(cfg.reasoning_replay ? { reasoningReplay: cfg.reasoning_replay } : {}) };
      void runHttp(loadClient(), ext, req, endpoint, profile, controller.signal).finally(done);
    }
  });
  ext.ready();
  if (http) {
    setImmediate(() => {
      const client = loadClient();
      client.catch(() => {}); // a failure is reported by the request that needs it
      if (listing) void declareListed(ext, client, { baseUrl: cfg.base_url as string, ...(apiKey ? { apiKey } : {}) }, models);
    });
  }
}

/**
 * Reads the server's listing and declares the models it decides (declaredModels). A listing that
 * cannot be had is not an error: a note in the extension's log says why, and the configured models
 * (or the fallback) are declared as `configured`.
 */
async function declareListed(ext: Extension, client: Promise<{ http: HttpClient; egress: EgressPolicy }>, profile: { baseUrl: string; apiKey?: string }, configured: readonly ModelInfo[]): Promise<void> {
  let result: ModelListingResult;
  try {
    const { http, egress } = await client;
    // A listing kept by an earlier provider within its TTL is used as it is (listing-cache.ts), in
    // this instance's state folder; an ephemeral session has none, and keeps nothing.
    const state = ext.configuration.state_dir;
    const file = isDirectory(state) ? http.listingCacheFile(state, profile.baseUrl, profile.apiKey) : undefined;
    const kept = file === undefined ? undefined : http.readCachedListing(file, profile.baseUrl);
    if (kept !== undefined) return declare(ext, configured, kept, profile.baseUrl);
    const listing = http.listModels(profile, { egress, ...(file === undefined ? {} : { onListed: (body: string) => http.writeCachedListing(file, profile.baseUrl, body) }) });
    // The listing took the connection opened ahead for the first prompt: open another for it.
    try {
      egress.preconnect(http.chatCompletionsUrl(profile.baseUrl));
    } catch {
      // reported by the first request
    }
    result = await listing;
  } catch (err) {
    result = { ok: false, reason: `the HTTP client could not start: ${(err as Error).name}` };
  }
  declare(ext, configured, result, profile.baseUrl);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Declares the models a listing (or its failure) decides. */
function declare(ext: Extension, configured: readonly ModelInfo[], result: ModelListingResult, baseUrl: string): void {
  mark("provider models listed");
  const declared = declaredModels(configured, result);
  if (!result.ok) {
    process.stderr.write(`debug: no model listing (GET /models: ${result.reason}); declaring ${declared.models.map((m) => m.id).join(", ").slice(0, 200)}\n`);
  } else if (result.skipped > 0) process.stderr.write(`debug: ${result.skipped} entries of the model listing were skipped (unusable, repeated, or past the bound)\n`);
  // The listing's failure says prompts will fail too: the harness tells the user before the first one.
  const problem = !result.ok && result.unusable !== undefined ? unusableProblem(baseUrl, result.unusable, result.reason) : undefined;
  void ext.emit("provider.models_declared", { ...declared, ...(problem !== undefined ? { problem } : {}) });
}

/** What a user reads when the endpoint refused the key or could not be reached (its origin and path only, never credentials or query). */
export function unusableProblem(baseUrl: string, why: "key" | "unreachable", reason: string): string {
  let where = "the configured base_url";
  try {
    const u = new URL(baseUrl);
    // Bounded: the whole text is a ShortText (1,024 characters), and the harness prefixes the instance.
    where = `${u.origin}${u.pathname.replace(/\/+$/, "")}`.slice(0, 400);
  } catch {
    // not a URL: the first prompt reports it as invalid
  }
  reason = reason.slice(0, 200);
  return why === "key"
    ? `${where} refused the API key (${reason}); prompts will fail until the key is fixed (the profile's api_key, or the environment variable it names)`
    : `cannot reach ${where} (${reason}); prompts will fail until it answers (is the server running? is base_url right?)`;
}

async function runScripted(ext: Extension, req: ProviderCall, signal: AbortSignal): Promise<void> {
  const turn = scriptedTurn(req);
  for (const text of turn.deltas) {
    if (signal.aborted) return;
    void ext.emit("provider.response_delta_reported", { prompt_id: req.prompt_id, round: req.round, text });
    await new Promise((r) => setTimeout(r, 5));
  }
  if (signal.aborted) return;
  void ext.emit("provider.response_finished_reported", {
    prompt_id: req.prompt_id,
    round: req.round,
    model: req.model,
    text: turn.deltas.join(""),
    tool_calls: [...turn.toolCalls],
    finish_reason: turn.toolCalls.length > 0 ? "tool_calls" : "stop",
    usage: turn.usage,
  });
}

type HttpClient = typeof import("./index.js");

async function runHttp(
  client: Promise<{ http: HttpClient; egress: EgressPolicy }>,
  ext: Extension,
  req: ProviderCall,
  profile: { baseUrl: string; apiKey?: string; reasoningReplay?: ReasoningReplay },
  family: "chat_completions" | "responses",
  signal: AbortSignal,
): Promise<void> {
  let http: HttpClient;
  let egress: EgressPolicy;
  try {
    ({ http, egress } = await client);
  } catch (err) {
    void ext.emit("provider.response_failed_reported", {
      prompt_id: req.prompt_id,
      round: req.round,
      error_class: "network",
      diagnostic: `the HTTP client could not start: ${(err as Error).message}`.slice(0, 500),
    });
    return;
  }
  if (signal.aborted) return;
  const deltas = new DeltaBatcher(ext, req);
  const stream = family === "responses" ? http.streamResponses : http.streamChatCompletion;
  const result = await stream(req, profile, {
    signal,
    egress,
    onDelta: (text, reasoning) => deltas.add(text, reasoning),
    onRetry: (n) => void ext.emit("provider.retry_reported", { prompt_id: req.prompt_id, round: req.round, ...n }),
  });
  deltas.flush();
  if (signal.aborted) return;
  if (result.status === "finished") void ext.emit("provider.response_finished_reported", result.report);
  else void ext.emit("provider.response_failed_reported", result.report);
}
