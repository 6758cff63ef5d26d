// Typed requests (SPEC-wire-protocol, "Requests"), as a JSON-RPC connection's `RequestType<P, R, E>`
// works. spec/ declares each request with what answers it (`x-tau-request`) and codegen writes its
// descriptor into `REQUESTS`. The asking side calls `request(channel, REQUESTS.x, params)`, which
// mints the request id, sends, matches the answer, turns a refusal into a `RequestError` and cleans
// up on close, abort or timeout. The answering side registers `serve(REQUESTS.x, handler)` on a
// `RequestServer` (wire messages) or calls `answerEvent` (events), which check the request, call the
// handler and send exactly one answer: a handler that throws is answered with the declared refusal.
import {
  EVENTS,
  MESSAGES,
  REQUESTS,
  type ErrorCode,
  type EventName,
  type EventPayloads,
  type RequestCaller,
  type RequestName,
  type RequestParams,
  type RequestPayloads,
  type RequestRefusals,
  type RequestResults,
  type RequestType,
  type WireMessage,
} from "../../generated/index.js";
import { SHORT_TEXT_MAX, fitText } from "./text.js";

type Via<V> = { [N in RequestName]: RequestType<N> extends { via: V } ? N : never }[RequestName];
/** Requests that are wire messages, and those published as events. */
export type MessageRequestName = Via<"message">;
export type EventRequestName = Via<"event">;
/** Requests that are answered, and notifications (never answered). */
export type AnsweredRequestName = { [N in RequestName]: RequestType<N>["result"] extends undefined ? never : N }[RequestName];
export type NotificationName = Exclude<RequestName, AnsweredRequestName>;

/** How a refused request is told: a wire request by an `error` code, an event request by a reason. */
export type RefusalOf<N extends RequestName> = N extends MessageRequestName ? ErrorCode : string;

/** What a request travels on: a Connection, or an extension's ordered sender over one. */
export interface RequestChannel {
  /** Returns "queued" (or a promise of it) when the frame is on its way. */
  send(message: WireMessage): string | Promise<string>;
  /** Returns its unsubscribe function. */
  onMessage(listener: (message: WireMessage) => void): () => void;
  /** Called once when the channel ends (at once if it has); returns its unsubscribe function. */
  onClose(listener: () => void): () => void;
}

export interface RequestOptions {
  readonly signal?: AbortSignal;
  /** Reject with `timeout` when no answer came within this long. */
  readonly timeoutMs?: number;
  /** The id to send instead of a minted one (a peer message's id, which a resend repeats). */
  readonly requestId?: string;
  /**
   * The channel carries this request alone (a probe's connection): an `error` without a request id,
   * which answers its `hello`, refuses the request too.
   */
  readonly soleRequest?: boolean;
}

export type RequestFailure = "refused" | "closed" | "timeout" | "aborted" | "unsent";

/** Why a request got no result: refused (with its code or reason), or lost. */
export class RequestError<N extends RequestName = RequestName> extends Error {
  override name = "RequestError";
  constructor(
    readonly request: N,
    readonly failure: RequestFailure,
    message: string,
    /** For `refused`: the `error` code of a wire request, the reason of an event request. */
    readonly refusal?: RefusalOf<N>,
  ) {
    super(message);
  }
}

/** A handler's refusal of a request: one of the codes (or, for an event request, a reason) its declaration allows. */
export class RequestRefusal<N extends RequestName = RequestName> extends Error {
  override name = "RequestRefusal";
  constructor(readonly refusal: RequestRefusals[N]) {
    super(String(refusal));
  }
}

/** Throw `refusal(REQUESTS.x, why)` from a handler to refuse a request the way its declaration allows. */
export function refusal<K extends RequestType>(_kind: K, why: RequestRefusals[K["name"]]): RequestRefusal<K["name"]> {
  return new RequestRefusal<K["name"]>(why);
}

/** Request `N`'s descriptor, its name typed as `N` itself (which lets `request` and `notify` infer `N`). */
export type Named<N extends RequestName> = RequestType<N> & { readonly name: N };

/** The descriptor of request `name`, for a caller generic over the name. */
export function requestKind<N extends RequestName>(name: N): Named<N> {
  // Codegen keys each descriptor by its own name, which the indexed type does not carry.
  return REQUESTS[name] as Named<N>;
}

let lastRequest = 0;

/** A request id unique to this process: `r-<pid>-<n>`. */
export function mintRequestId(): string {
  lastRequest += 1;
  return `r-${process.pid}-${lastRequest}`;
}

/** Sends a request and resolves with its answer (see RequestError for every other ending). */
export function request<N extends AnsweredRequestName>(channel: RequestChannel, kind: Named<N>, params: RequestParams[N], options: RequestOptions = {}): Promise<RequestResults[N]> {
  const k = kind as Descriptor;
  const id = options.requestId ?? mintRequestId();
  return new Promise<RequestResults[N]>((resolve, reject) => {
    const cleanups: Array<() => void> = [];
    let settled = false;
    const settle = (then: () => void) => {
      if (settled) return;
      settled = true;
      for (const c of cleanups) c();
      then();
    };
    const fail = (failure: RequestFailure, message: string, why?: string) =>
      settle(() => reject(new RequestError<N>(k.name as N, failure, message, why as RefusalOf<N> | undefined)));
    const { signal } = options;
    if (signal?.aborted) return fail("aborted", `${k.name} was aborted before it was sent`);
    cleanups.push(
      channel.onMessage((m) => {
        const answer = answerOf(k, m, id, options.soleRequest === true);
        if (answer === undefined) return;
        if (answer.ok) settle(() => resolve(answer.result as RequestResults[N]));
        // An event request's refusal is the answerer's own words; a wire request's is a code.
        else fail("refused", k.via === "event" ? answer.refusal : `${k.name} was refused (${answer.refusal})`, answer.refusal);
      }),
    );
    cleanups.push(channel.onClose(() => fail("closed", `the connection ended before ${k.name} was answered`)));
    if (settled) return;
    if (options.timeoutMs !== undefined) {
      const timer = setTimeout(() => fail("timeout", `${k.name} got no answer within ${options.timeoutMs} ms`), options.timeoutMs);
      cleanups.push(() => clearTimeout(timer));
    }
    if (signal) {
      const onAbort = () => fail("aborted", `${k.name} was aborted`);
      signal.addEventListener("abort", onAbort, { once: true });
      cleanups.push(() => signal.removeEventListener("abort", onAbort));
    }
    void Promise.resolve(channel.send(frameOf(k, params as Record<string, unknown>, id))).then((sent) => {
      if (sent !== "queued") fail("unsent", `${k.name} could not be sent (${sent})`);
    });
  });
}

/** Sends a notification (a request that is never answered); returns what the channel said. */
export function notify<N extends NotificationName>(channel: RequestChannel, kind: Named<N>, params: RequestParams[N]): string | Promise<string> {
  return channel.send({ message: kind.name, payload: params } as WireMessage);
}

type Descriptor = RequestType;
type Answer = { readonly ok: true; readonly result: Record<string, unknown> } | { readonly ok: false; readonly refusal: string };

function frameOf(k: Descriptor, params: Record<string, unknown>, id: string): WireMessage {
  if (k.via === "event") return { message: "emit", payload: { event: { name: k.name, data: { request_id: id, ...params } } } };
  return { message: k.name, payload: { request_id: id, ...params } } as WireMessage;
}

/** `m` as the answer to request `id` of kind `k`, or undefined when it answers something else. */
function answerOf(k: Descriptor, m: WireMessage, id: string, sole: boolean): Answer | undefined {
  if (m.message === "error") {
    const to = m.payload.request_id;
    return to === id || (sole && to === undefined) ? { ok: false, refusal: m.payload.code } : undefined;
  }
  if (k.via === "message") {
    if (m.message !== k.result) return undefined;
    const { request_id, ...result } = m.payload as { request_id?: string };
    return request_id === id ? { ok: true, result } : undefined;
  }
  if (m.message !== (k.answer === "direct" ? "direct" : "deliver")) return undefined;
  if (m.message === "deliver" && m.payload.replay === true) return undefined;
  const event = (m.payload as { event: { name: string; data: Record<string, unknown> } }).event;
  if (event.name !== k.result || event.data.request_id !== id) return undefined;
  const { request_id: _id, ok, ...result } = event.data;
  const missing = k.success.find((f) => result[f] === undefined);
  if (ok === true && missing === undefined) return { ok: true, result };
  if (ok === true) return { ok: false, refusal: `the answer carries no ${missing}` };
  const reason = event.data[k.refusal];
  return { ok: false, refusal: typeof reason === "string" && reason !== "" ? reason : "refused" };
}

/** A wire-request handler: given the request's whole payload and what its server knows of the caller. */
export type RequestHandler<N extends MessageRequestName, C> = (payload: RequestPayloads[N], context: C) => RequestResults[N] | Promise<RequestResults[N]>;

/** Where a server's answers go: the requester's connection. */
export interface AnswerChannel {
  send(message: WireMessage): string;
  sendAsync(message: WireMessage): Promise<string>;
  destroy(detail?: string): void;
}

export interface RequestServerOptions {
  /** Answer a caller the declaration does not name with `error{unauthorized}` (a socket), or say nothing (an extension). */
  readonly refuseUnauthorized: boolean;
  /** Where a handler's unexpected failure is reported (never the request's content). */
  readonly log?: (line: string) => void;
}

interface Served<C> {
  readonly kind: Descriptor & { via: "message" };
  /** The handler, given a payload that has passed its request's schema check. */
  readonly run: (payload: WireMessage["payload"], context: C) => unknown;
  readonly wait: boolean;
}

/** Whether `kind`'s declaration lets `caller` send it. */
function allows(kind: Descriptor & { via: "message" }, caller: RequestCaller): boolean {
  const callers: readonly RequestCaller[] = kind.callers;
  return callers.includes(caller);
}

/** The wire requests one side answers, each by its `serve`d handler. */
export class RequestServer<C> {
  private readonly served = new Map<string, Served<C>>();

  constructor(private readonly options: RequestServerOptions) {}

  /**
   * Answers `kind` with `handler`. `wait`: a large answer waits for room on the connection rather
   * than being refused when the queue is full.
   */
  serve<K extends RequestType<MessageRequestName>>(kind: K, handler: RequestHandler<K["name"], C>, o: { readonly wait?: boolean } = {}): this {
    if (this.served.has(kind.name)) throw new Error(`${kind.name} is already served`);
    // `handle` calls `run` only once the payload has passed the schema of `kind`'s message.
    const run = (payload: WireMessage["payload"], context: C) => handler(payload as RequestPayloads[K["name"]], context);
    this.served.set(kind.name, { kind: kind as Served<C>["kind"], run, wait: o.wait === true });
    return this;
  }

  /** The requests this server answers, by name. */
  names(): string[] {
    return [...this.served.keys()].sort();
  }

  /** Whether `message` is a request this server answers and `caller` may send. */
  accepts(message: WireMessage, caller: RequestCaller): boolean {
    const s = this.served.get(message.message);
    return s !== undefined && allows(s.kind, caller);
  }

  /**
   * Takes `message` when it is a request this server answers: returns false for anything else. A
   * caller its declaration does not name, or a payload that fails its schema, is refused; otherwise
   * the handler's result or refusal is sent, exactly once.
   */
  handle(conn: AnswerChannel, caller: RequestCaller, message: WireMessage, context: C): boolean {
    const s = this.served.get(message.message);
    if (!s) return false;
    const { kind } = s;
    const requestId = kind.result === undefined ? undefined : (message.payload as { request_id?: string }).request_id;
    const refuse = (code: ErrorCode) => {
      if (kind.result === undefined) return;
      answer(conn, { message: "error", payload: { code, ...(requestId !== undefined ? { request_id: requestId } : {}) } }, false);
    };
    if (!allows(kind, caller)) {
      if (this.options.refuseUnauthorized) {
        const payload = { code: "unauthorized" as const, ...(requestId !== undefined ? { request_id: requestId } : {}) };
        answer(conn, { message: "error", payload }, false);
      }
      return true;
    }
    if (!MESSAGES[kind.name].validate(message)) {
      refuse("invalid");
      return true;
    }
    const failed = (err: unknown) => {
      if (err instanceof RequestRefusal) return refuse(err.refusal as ErrorCode);
      this.options.log?.(`${kind.name}: its handler failed (${err instanceof Error ? err.name : "error"}); answered invalid`);
      refuse("invalid");
    };
    const done = (result: unknown) => {
      if (kind.result === undefined) return;
      answer(conn, { message: kind.result, payload: { ...(result as object), request_id: requestId } } as WireMessage, s.wait);
    };
    let out: unknown;
    try {
      out = s.run(message.payload, context);
    } catch (err) {
      failed(err);
      return true;
    }
    if (out instanceof Promise) out.then(done, failed);
    else done(out);
    return true;
  }
}

/** Sends one answer; a requester that does not read its answers is not served further. */
function answer(conn: AnswerChannel, message: WireMessage, wait: boolean): void {
  const full = (sent: string) => {
    if (sent === "full") conn.destroy("peer is not reading its answers");
  };
  if (wait) void conn.sendAsync(message).then(full);
  else full(conn.send(message));
}

/**
 * Answers one event request exactly once (SPEC-wire-protocol, "Requests"): the handler's result as
 * `{request_id, ok: true, …}`, or — when the request fails its schema or the handler throws — the
 * refusal `{request_id, ok: false, <refusal>: reason}`, the reason a RequestRefusal's or the
 * thrown error's message, on one line and bounded.
 */
export async function answerEvent<N extends EventRequestName>(
  name: N,
  payload: EventPayloads[N],
  handler: (payload: RequestPayloads[N]) => RequestResults[N] | Promise<RequestResults[N]>,
  send: <R extends EventName>(name: R, data: EventPayloads[R]) => unknown,
): Promise<void> {
  const k = REQUESTS[name] as Descriptor & { via: "event" };
  const request_id = (payload as { request_id: string }).request_id;
  let data: Record<string, unknown>;
  try {
    if (!EVENTS[k.name].validate(payload)) throw new Error("the request does not match its schema");
    // A request event's payload and its request's payload are the one spec model (codegen names both).
    data = { request_id, ok: true, ...((await handler(payload as RequestPayloads[N])) as Record<string, unknown>) };
  } catch (err) {
    data = { request_id, ok: false, [k.refusal]: reasonOf(err, k.refusalMax) };
  }
  // The answer is the handler's result (typed by the request) or the declared refusal, under the
  // request's id: the shape of `k.result`'s payload, which the field-by-field build cannot show.
  send(k.result, data as EventPayloads[typeof k.result]);
}

/**
 * A refusal's reason, fitted to its field: without control characters, and on one line where the
 * field is short text (ShortText); a longer field keeps its line breaks.
 */
export function reasonOf(err: unknown, max: number = SHORT_TEXT_MAX): string {
  const text = err instanceof RequestRefusal ? String(err.refusal) : err instanceof Error ? err.message : String(err);
  // eslint-disable-next-line no-control-regex
  const control = max > SHORT_TEXT_MAX ? /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]+/g : /[\u0000-\u001f\u007f-\u009f]+/g;
  const reason = fitText(text.replace(control, " "), max);
  return reason === "" ? "refused" : reason;
}
