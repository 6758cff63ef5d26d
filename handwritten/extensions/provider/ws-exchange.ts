// One request's exchange on an open WebSocket (SPEC-provider-websocket): the request sent as one
// text frame, the family's stream read from the text frames that answer it until the response
// completes, every silence bounded; a wrapped error event classified by its status.
import type WebSocket from "ws";
import type { ProviderResponseFinishedReported } from "../../../generated/index.js";
import { EgressTimeoutError } from "./egress.js";
import { ProviderFailure, classifyHttp, errorFields } from "./errors.js";
import { windowFromError, windowsFromEvent, windowsFromHeaders, type QuotaWindow } from "./quota.js";
import { STREAM_IDLE_TIMEOUT_MS, describeFields, type Attempt } from "./round.js";
import type { WsSide } from "./ws-connect.js";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Sends the request on `ws` and reads its events until the response completes. */
export function exchangeOnWebSocket(ws: WebSocket, a: Attempt, sawFrame: { value: boolean }, o: WsSide): Promise<ProviderResponseFinishedReported> {
  const { maxFrame, quota } = o;
  const { req, opts, shared, family } = a;
  const state = family.stream(shared, opts.onDelta);
  const idleMs = opts.timeouts?.idleMs ?? STREAM_IDLE_TIMEOUT_MS;
  return new Promise<ProviderResponseFinishedReported>((resolve, reject) => {
    let settled = false;
    let idle: NodeJS.Timeout | undefined;
    const cleanup = () => {
      clearTimeout(idle);
      ws.off("message", onMessage);
      ws.off("close", onClose);
      ws.off("error", onError);
      opts.signal?.removeEventListener("abort", onAbort);
    };
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      cleanup();
      ws.on("error", () => {});
      ws.terminate(); // a half-read stream cannot carry the next request
      reject(err);
    };
    const finish = () => {
      if (settled) return;
      let report: ProviderResponseFinishedReported;
      try {
        report = state.report(req);
      } catch (err) {
        return fail(err);
      }
      settled = true;
      cleanup();
      resolve(report);
    };
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => fail(new EgressTimeoutError("TAU_EGRESS_BODY_TIMEOUT", `the WebSocket stream (idle ${idleMs} ms)`)), idleMs);
    };
    const onMessage = (data: WebSocket.RawData, isBinary: boolean) => {
      sawFrame.value = true;
      arm();
      const frame = decodeFrame(data, isBinary);
      if (frame instanceof ProviderFailure) return fail(frame);
      const { text, parsed } = frame;
      if (isObject(parsed)) {
        if (parsed.type === "codex.rate_limits") return quota(windowsFromEvent(parsed, Date.now()));
        if (parsed.type === "error") {
          const failure = wrappedError(parsed, quota);
          if (failure) return fail(failure);
        }
      }
      try {
        state.event({ event: "message", data: text });
      } catch (err) {
        return fail(err);
      }
      if (state.done) finish();
    };
    const onClose = (code: number) => {
      if (state.complete) return finish();
      fail(new ProviderFailure("network", `the WebSocket closed before the response completed (code ${code})`));
    };
    const onError = (err: Error & { code?: string }) => {
      if (err.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") return fail(new ProviderFailure("protocol", `a WebSocket frame larger than ${maxFrame} bytes`, false));
      fail(err);
    };
    const onAbort = () => fail(new ProviderFailure("cancelled", "request cancelled"));
    ws.on("message", onMessage);
    ws.on("close", onClose);
    ws.on("error", onError);
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    arm();
    ws.send(a.payload, (err) => {
      if (err) fail(err);
    });
  });
}

/** A text frame's text and the JSON it holds, or why it is no event. */
function decodeFrame(data: WebSocket.RawData, isBinary: boolean): { text: string; parsed: unknown } | ProviderFailure {
  if (isBinary) return new ProviderFailure("protocol", "a binary WebSocket frame where text events were expected");
  const text = Array.isArray(data) ? Buffer.concat(data).toString("utf8") : Buffer.from(data as ArrayBuffer).toString("utf8");
  try {
    return { text, parsed: JSON.parse(text) as unknown };
  } catch {
    return new ProviderFailure("protocol", "a WebSocket event is not valid JSON");
  }
}

/** A wrapped error event (`{type: "error", status, error, headers}`): classified by its status. */
function wrappedError(ev: Record<string, unknown>, quota: (w: QuotaWindow[]) => void): ProviderFailure | undefined {
  const error = isObject(ev.error) ? ev.error : {};
  const now = Date.now();
  if (isObject(ev.headers)) {
    const h: Record<string, string> = {};
    for (const [k, v] of Object.entries(ev.headers)) if (typeof v === "string" || typeof v === "number") h[k.toLowerCase()] = String(v);
    quota(windowsFromHeaders(h, now));
  }
  if (error.code === "websocket_connection_limit_reached") return new ProviderFailure("network", "the server ended this WebSocket connection's time; a new one is opened");
  const status = typeof ev.status === "number" ? ev.status : typeof ev.status_code === "number" ? ev.status_code : undefined;
  if (status === undefined || status < 400) return undefined; // the family reads it as a stream error
  const limit = status === 429 ? windowFromError(error, now) : undefined;
  if (limit) quota([limit]);
  const fields = errorFields(ev);
  const { errorClass, retryable } = classifyHttp(status, fields);
  const retryAfterMs = limit?.resetsAtMs !== undefined ? Math.max(0, limit.resetsAtMs - now) : undefined;
  return new ProviderFailure(errorClass, `HTTP ${status} in the WebSocket stream${describeFields(fields)}`, retryable, retryAfterMs);
}
