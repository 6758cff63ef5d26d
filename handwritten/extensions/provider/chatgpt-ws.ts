// The chatgpt_ws wire family (SPEC-provider-websocket): the Responses event stream over a WebSocket
// (`{base}/responses` as ws:// or wss://), signed in with ChatGPT (oauth.ts), paced by the server's
// quota reports (quota.ts). The request is a `response.create` frame carrying the same body the
// Responses family posts; the answer is the same typed events, one per text frame, read by the same
// code (responses.ts).
import type { ProviderCall } from "../../protocol/provider-request.js";
import { sanitizeDiagnostic } from "./errors.js";
import { OAuthError, type TokenSource } from "./oauth.js";
import { QuotaPacer, describeWindow, type QuotaWindow } from "./quota.js";
import { RESPONSES, buildResponsesBody } from "./responses.js";
import { AbortedWait, sleep } from "./retry.js";
import { endpointUrl, streamRound, type ProviderProfile, type RoundResult, type StreamRoundOptions, type WireFamily } from "./round.js";
import { endpointName, webSocketTransport, type WsLifecycle, type WsTransport, type WsTransportOptions } from "./ws-transport.js";

/** The beta the WebSocket endpoint is asked for in the upgrade (unverified, see the SPEC). */
export const CHATGPT_WS_BETA = "responses_websockets=2026-02-06";

/** `{base}/responses` with the base URL's http(s) scheme turned into ws(s). */
export function chatgptWsUrl(baseUrl: string): URL {
  const url = endpointUrl(baseUrl, "/responses");
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url;
}

/** The chatgpt_ws wire family: a `response.create` frame out, Responses events in. */
export const CHATGPT_WS: WireFamily = {
  url: chatgptWsUrl,
  // The ChatGPT backend refuses `max_output_tokens`: an answer's bound is not sent there.
  payload: (request) => JSON.stringify({ type: "response.create", ...buildResponsesBody({ ...request, max_output_tokens: undefined }) }),
  stream: RESPONSES.stream,
};

export type Notice = (level: "info" | "warning", text: string) => void;

export interface ChatgptWsOptions {
  readonly baseUrl: string;
  readonly tokens: TokenSource;
  /** Credential-free notices: lifecycle (connected, closed, retrying) and quota waits. */
  readonly notice: Notice;
  readonly transport?: WsTransportOptions;
  readonly maxQuotaWaitMs?: number;
}

/** Lifecycle in words: where, and what happened; never a header or a token. */
export function lifecycleText(e: WsLifecycle): string | undefined {
  switch (e.state) {
    case "connected":
      return `connected to ${e.endpoint}`;
    case "closed":
      return `connection to ${e.endpoint} closed (code ${e.code}${e.reason !== "" ? `: ${sanitizeDiagnostic(e.reason)}` : ""})`;
    default:
      return undefined; // connecting and reuse are not worth a line
  }
}

/** One provider's client of the family: its kept connections, its quota and its tokens. */
export class ChatgptWsClient {
  readonly pacer: QuotaPacer;
  readonly transport: WsTransport;

  constructor(private readonly o: ChatgptWsOptions) {
    this.pacer = new QuotaPacer(o.maxQuotaWaitMs);
    this.transport = webSocketTransport({
      ...o.transport,
      onLifecycle: (e) => {
        const text = lifecycleText(e);
        if (text !== undefined) o.notice("info", text);
        o.transport?.onLifecycle?.(e);
      },
      onQuota: (windows) => this.quota(windows),
    });
  }

  quota(windows: QuotaWindow[]): void {
    const now = Date.now();
    for (const w of this.pacer.update(windows)) this.o.notice("warning", `quota ${describeWindow(w, now)}: requests will wait for its reset when it is used up`);
  }

  /** Runs one round: paced, signed in, refreshed once when the server refuses the access token. */
  async run(request: ProviderCall, opts: StreamRoundOptions): Promise<RoundResult> {
    const failed = (error_class: "rate_limited" | "authentication" | "cancelled", diagnostic: string, secrets: string[] = []): RoundResult => ({
      status: "failed",
      attempts: 0,
      report: { prompt_id: request.prompt_id, round: request.round, error_class, diagnostic: sanitizeDiagnostic(diagnostic, secrets) },
    });
    const plan = this.pacer.plan(Date.now());
    if (plan.kind === "refuse") return failed("rate_limited", `quota ${describeWindow(plan.window, Date.now())}: not sent; it resets later than tau waits (${Math.round((this.o.maxQuotaWaitMs ?? 300_000) / 1000)} s)`);
    if (plan.kind === "wait") {
      this.o.notice("warning", `quota ${describeWindow(plan.window, Date.now())}: waiting ${Math.ceil(plan.ms / 1000)} s before sending`);
      try {
        await sleep(plan.ms, opts.signal);
      } catch (err) {
        if (err instanceof AbortedWait) return failed("cancelled", "request cancelled while waiting for the quota to reset");
        throw err;
      }
    }
    let refused = false;
    for (;;) {
      let profile: ProviderProfile;
      try {
        const t = await this.o.tokens.current(refused);
        profile = {
          baseUrl: this.o.baseUrl,
          apiKey: t.access_token,
          headers: { "openai-beta": CHATGPT_WS_BETA, originator: "tau", ...(t.account_id ? { "chatgpt-account-id": t.account_id } : {}) },
        };
      } catch (err) {
        if (err instanceof OAuthError) return failed("authentication", err.message);
        return failed("authentication", `the sign-in could not be used (${(err as Error).name})`);
      }
      let emitted = false;
      const result = await streamRound(
        request,
        profile,
        {
          ...opts,
          onDelta: (t, r) => {
            emitted = true;
            opts.onDelta?.(t, r);
          },
          onRetry: (n) => {
            this.o.notice("info", `retrying ${endpointName(chatgptWsUrl(this.o.baseUrl))} in ${n.delay_ms} ms (${n.error_class})`);
            opts.onRetry?.(n);
          },
        },
        CHATGPT_WS,
        this.transport,
      );
      if (result.status === "failed" && result.report.error_class === "authentication" && !refused && !emitted) {
        refused = true; // a refused access token is refreshed once
        continue;
      }
      return result;
    }
  }

  close(): void {
    this.transport.close();
  }
}
