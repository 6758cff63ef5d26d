// Admission: may this publisher publish this event? Decided only by the generated authority matrix
// and what the harness configured and authenticated about the publisher (SPEC-event-publication).
// Authority is judged before the schema, so a peer learns nothing of an event it may not publish.
import { AUTHORITY, isEventName, type EventName } from "../../generated/index.js";
import type { ExtensionKind, PeerClass } from "../../generated/index.js";
import { eventProblem, type Event } from "../protocol/index.js";

/** What the harness knows about a publisher: never taken from a peer's own claims. */
export interface PublisherIdentity {
  readonly class: PeerClass;
  /** Configured kind, for extensions. */
  readonly kind?: ExtensionKind;
  /** Capabilities the harness configured for this peer (`message_bridge`, …). */
  readonly capabilities?: readonly string[];
}

export type AdmissionResult =
  | { readonly ok: true; readonly event: EventName }
  | { readonly ok: false; readonly reason: "unknown_event" | "unauthorized" };

/** The authority-table name of a publisher's class, e.g. `ext:tool` or `ui:attached`. */
export function tableClassOf(p: PublisherIdentity): string {
  switch (p.class) {
    case "harness":
      return "harness";
    case "extension":
      return `ext:${p.kind ?? "unknown"}`;
    case "ui_attached":
      return "ui:attached";
    case "ui_embedded":
      return "ui:embedded";
    case "socket_other":
      return "socket:other";
    case "peer_external":
      return "peer:external";
  }
}

/** The inverse of `tableClassOf` for concrete classes; used by generated conformance tests. */
export function publisherFromClass(cls: string): PublisherIdentity {
  if (cls.startsWith("ext:")) return { class: "extension", kind: cls.slice(4) as ExtensionKind };
  const map: Record<string, PeerClass> = {
    harness: "harness",
    "ui:attached": "ui_attached",
    "ui:embedded": "ui_embedded",
    "socket:other": "socket_other",
    "peer:external": "peer_external",
  };
  const pc = map[cls];
  if (!pc) throw new Error(`unknown publisher class ${cls}`);
  return { class: pc };
}

function rowAdmits(entry: string, p: PublisherIdentity, cls: string): boolean {
  const [base, capability] = entry.split("+");
  if (capability !== undefined && !(p.capabilities ?? []).includes(capability)) return false;
  if (base === cls) return true;
  return base === "ext:any" && p.class === "extension" && p.kind !== undefined;
}

/** Deny by default: an event with no row, or a class its row does not list, is refused. */
export function admit(event: string, publisher: PublisherIdentity): AdmissionResult {
  if (!isEventName(event)) return { ok: false, reason: "unknown_event" };
  const cls = tableClassOf(publisher);
  const row = AUTHORITY[event];
  if (row.publishers.some((entry) => rowAdmits(entry, publisher, cls))) return { ok: true, event };
  return { ok: false, reason: "unauthorized" };
}

/** A publication as it arrives from a peer: a name and data, neither admitted nor validated yet. */
export interface UnjudgedEvent {
  readonly name: string;
  readonly data: Readonly<Record<string, unknown>>;
}

export type Judgement =
  | { readonly ok: true; readonly event: Event }
  | { readonly ok: false; readonly reason: "unknown_event" | "unauthorized" | "invalid"; readonly detail?: string };

/**
 * Authority first, then the schema: an unknown event, or one the publisher's class may not publish,
 * is refused whatever its data (`unknown_event` and `unauthorized` say nothing of a schema); only an
 * event the publisher may publish has its data checked against its schema (`invalid`).
 */
export function judge(input: UnjudgedEvent, publisher: PublisherIdentity): Judgement {
  const admission = admit(input.name, publisher);
  if (!admission.ok) return admission;
  const problem = eventProblem(input);
  if (problem) return { ok: false, reason: "invalid", detail: problem.message };
  return { ok: true, event: input as Event };
}
