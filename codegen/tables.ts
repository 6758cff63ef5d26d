// Joins the schemas with the records into the event registry, message registry, authority matrix,
// persistence policy, gate table and record index, and checks their cross-references.
import type { JsonSchema } from "./typespec.js";
import type { Problems } from "./errors.js";
import type { AuthorityRow, ParsedRecord } from "./records.js";
import { typeNameOf } from "./typescript.js";

export interface EventEntry {
  name: string;
  family: string;
  model: string;
  description: string;
  file: string;
  authority: AuthorityRow;
}

export interface MessageEntry {
  name: string;
  direction: string;
  model: string;
  description: string;
}

export interface Tables {
  events: EventEntry[];
  messages: MessageEntry[];
  records: ParsedRecord[];
  /** The protocol revision this build speaks: `x-tau-current` of spec/common.tsp's Revision. */
  revision: { major: number; minor: number };
}

const DIRECTIONS = ["to_harness", "from_harness", "both"];

export function buildTables(schemas: Map<string, JsonSchema>, records: ParsedRecord[], problems: Problems): Tables {
  const rowsByEvent = new Map<string, AuthorityRow[]>();
  for (const r of records) {
    for (const row of r.authority) {
      const list = rowsByEvent.get(row.event) ?? [];
      list.push(row);
      rowsByEvent.set(row.event, list);
    }
  }
  const events: EventEntry[] = [];
  const messages: MessageEntry[] = [];
  const seenEvents = new Set<string>();
  for (const [id, schema] of schemas) {
    const eventName = schema["x-tau-event"];
    if (typeof eventName === "string") {
      const file = `spec/ (model ${typeNameOf(id)})`;
      if (seenEvents.has(eventName)) problems.add(file, `event ${eventName} is declared by more than one model`);
      seenEvents.add(eventName);
      const rows = rowsByEvent.get(eventName) ?? [];
      if (rows.length === 0) {
        problems.add(file, `event ${eventName} has no authority row in any SPEC (deny by default: add one)`);
        continue;
      }
      if (rows.length > 1) {
        problems.add(
          rows.map((r) => `records/${r.record}.md`).join(", "),
          `event ${eventName} has ${rows.length} authority rows; exactly one is required`,
        );
        continue;
      }
      events.push({
        name: eventName,
        family: eventName.split(".")[0] ?? "",
        model: typeNameOf(id),
        description: typeof schema.description === "string" ? schema.description : "",
        file,
        authority: rows[0] as AuthorityRow,
      });
    }
    const messageName = schema["x-tau-message"];
    if (typeof messageName === "string") {
      const direction = schema["x-tau-direction"];
      if (typeof direction !== "string" || !DIRECTIONS.includes(direction)) {
        problems.add(`spec/wire.tsp (model ${typeNameOf(id)})`, `message ${messageName} needs x-tau-direction`);
        continue;
      }
      messages.push({
        name: messageName,
        direction,
        model: typeNameOf(id),
        description: typeof schema.description === "string" ? schema.description : "",
      });
    }
  }
  for (const [event, rows] of rowsByEvent) {
    if (!seenEvents.has(event)) {
      for (const row of rows) problems.add(`records/${row.record}.md`, `authority row ${event} names an unknown event`);
    }
    for (const row of rows) {
      for (const s of row.successors) {
        if (!seenEvents.has(s) && !rowsByEvent.has(s)) {
          problems.add(`records/${row.record}.md`, `authority row ${event} names unknown successor ${s}`);
        }
      }
    }
  }
  events.sort((a, b) => cmp(a.name, b.name));
  messages.sort((a, b) => cmp(a.name, b.name));
  return { events, messages, records, revision: currentRevision(schemas, problems) };
}

function currentRevision(schemas: Map<string, JsonSchema>, problems: Problems): Tables["revision"] {
  const current = schemas.get("Revision.json")?.["x-tau-current"] as { major?: unknown; minor?: unknown } | undefined;
  const part = (v: unknown) => (Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 0xffff ? (v as number) : undefined);
  const major = part(current?.major);
  const minor = part(current?.minor);
  if (major === undefined || minor === undefined) {
    problems.add("spec/common.tsp (model Revision)", "Revision needs x-tau-current: the protocol revision this build speaks, as #{ major, minor }");
    return { major: 0, minor: 0 };
  }
  return { major, minor };
}

export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
