// Message validation: every inbound frame is checked against the generated validators before any
// handler sees it, and the payload of an event the harness sends against its event's schema. The
// payload of an event a peer `emit`s is judged at admission instead, after the publisher's authority
// (SPEC-event-publication, "Admission"), so a peer learns nothing of an event it may not publish.
import {
  type DeliverMessage,
  EVENTS,
  MESSAGES,
  type EventEnvelope,
  type EventInfo,
  type EventName,
  type EventPayloads,
  type GeneratedValidator,
  type MessageInfo,
  type MessageName,
  type WireMessage,
} from "../../generated/index.js";
import { WireError } from "./errors.js";
import { FrameReader, type FrameResult } from "./frame.js";
import { MAX_FRAME_BYTES } from "./limits.js";

/** Which end is reading: the harness accepts `to_harness` messages, peers `from_harness` ones. */
export type Side = "harness" | "peer";

/** Messages whose event's payload the reader checks: the harness's. An `emit` is judged at admission. */
const EVENT_CARRIERS = new Set<MessageName>(["deliver", "direct", "intercept_request"]);

// The generated tables as Maps: a name just decoded from a frame is a fresh string, and a Map finds
// it with one hash lookup, about half the cost of `Object.hasOwn` and indexing on the table object.
// Only own entries are in them, as with `isMessageName`/`isEventName`.
const MESSAGE_INFO: ReadonlyMap<string, MessageInfo> = new Map(Object.entries(MESSAGES));
const EVENT_INFO: ReadonlyMap<string, EventInfo> = new Map(Object.entries(EVENTS));

export type ParseResult = { readonly ok: true; readonly message: WireMessage } | { readonly ok: false; readonly error: WireError };

/** Validates a decoded frame value as a wire message readable by `side`. */
export function parseMessage(value: unknown, side: Side): ParseResult {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return fail("invalid", "frame is not a {message, payload} map");
  }
  const name = (value as { message?: unknown }).message;
  if (typeof name !== "string") return fail("invalid", "frame has no message name");
  const info = MESSAGE_INFO.get(name);
  if (!info) return fail("unknown_message", "unknown message");
  const wanted = side === "harness" ? "to_harness" : "from_harness";
  if (info.direction !== "both" && info.direction !== wanted) {
    return fail("unknown_message", `${name} is not accepted by the ${side}`);
  }
  if (!info.validate(value)) return fail("invalid", `${name}: ${describeErrors(info.validate)}`);
  const message = value as WireMessage;
  if (EVENT_CARRIERS.has(info.name)) {
    const event = (message.payload as { event: EventEnvelope }).event;
    const problem = eventProblem(event);
    if (problem) return { ok: false, error: problem };
  }
  if (message.message === "intercept_reply" && message.payload.replacement) {
    const problem = eventProblem(message.payload.replacement);
    if (problem) return { ok: false, error: problem };
  }
  return { ok: true, message };
}

/** An event as its schema types it: narrowing on `name` narrows `data` to that event's payload. */
export type Event<N extends EventName = EventName> = { [K in N]: { readonly name: K; readonly data: EventPayloads[K] } }[N];

/**
 * The event a name and data are, once its data passed its name's schema — the one place untyped
 * data becomes a typed event (files read back, anything not already checked by `parseMessage`).
 */
export function checkedEvent(name: string, data: Readonly<Record<string, unknown>>): Event | WireError {
  return eventProblem({ name, data }) ?? ({ name, data } as Event);
}

/** The agent an event is about, for the events that name one. */
export function agentIdOf(e: Event): string | undefined {
  return "agent_id" in e.data ? e.data.agent_id : undefined;
}

/**
 * The event a `deliver`, `direct` or `intercept_request` message `parseMessage` accepted carries: its
 * data passed its name's schema there. (An `emit`'s event has not: it goes through admission.)
 */
export function carriedEvent(event: EventEnvelope): Event {
  return event as Event;
}

/** A `deliver` payload whose event is typed by its name. */
export type EventDelivery = Omit<DeliverMessage["payload"], "event"> & { readonly event: Event };

/** The delivery a `deliver` message `parseMessage` accepted carries (see `carriedEvent`). */
export function carriedDelivery(payload: DeliverMessage["payload"]): EventDelivery {
  return payload as EventDelivery;
}

/** Validates an event envelope's payload against the schema registered for its name. */
export function eventProblem(event: { readonly name: string; readonly data: Readonly<Record<string, unknown>> }): WireError | undefined {
  const info = EVENT_INFO.get(event.name);
  if (!info) return new WireError("unknown_message", "unknown event");
  const validate = info.validate;
  if (!validate(event.data)) return new WireError("invalid", `${event.name}: ${describeErrors(validate)}`);
  return undefined;
}

function fail(code: WireError["code"], description: string): ParseResult {
  return { ok: false, error: new WireError(code, description) };
}

/** A short description from ajv's first error: path and keyword only, never values. */
function describeErrors(validate: GeneratedValidator): string {
  const first = validate.errors?.[0];
  if (!first) return "does not match its schema";
  const path = (first.instancePath || "/").replace(/[^A-Za-z0-9_/.-]/g, "?").slice(0, 120);
  return `${path} fails ${first.keyword}`;
}

/** Frames in, validated messages (or typed errors) out. */
export class MessageReader {
  private readonly frames: FrameReader;

  constructor(
    private readonly side: Side,
    maxBytes: number = MAX_FRAME_BYTES,
  ) {
    this.frames = new FrameReader(maxBytes);
  }

  get isClosed(): boolean {
    return this.frames.isClosed;
  }

  get bufferedBytes(): number {
    return this.frames.bufferedBytes;
  }

  push(chunk: Uint8Array): ParseResult[] {
    return this.frames.push(chunk).map((r: FrameResult) => (r.ok ? parseMessage(r.value, this.side) : r));
  }
}
