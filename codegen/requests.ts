// Requests (SPEC-wire-protocol, "Requests"): every message or event the spec marks `x-tau-request`
// with what answers it, checked against the message and event registries and the authority matrix,
// rendered as generated/requests.ts — one typed descriptor per request (its name, its answer, who
// may send it, how it is refused) and the type maps `request(...)` and `serve(...)` are typed by.
import type { JsonSchema } from "./typespec.js";
import type { Problems } from "./errors.js";
import type { Tables } from "./tables.js";
import { typeNameOf } from "./typescript.js";

/** Who may send a request that is a wire message. */
export const REQUEST_CALLERS = ["ui", "client", "peer", "extension"] as const;

export type RequestEntry =
  | {
      readonly via: "message";
      readonly name: string;
      readonly model: string;
      /** The message that answers it; undefined: a notification. */
      readonly result?: { readonly name: string; readonly model: string };
      readonly callers: readonly string[];
      readonly errors: readonly string[];
      readonly description: string;
    }
  | {
      readonly via: "event";
      readonly name: string;
      readonly model: string;
      readonly result: { readonly name: string; readonly model: string };
      /** The result's field holding the reason when `ok` is false. */
      readonly refusal: string;
      /** Whether that field is optional in the result (then it is not part of a success). */
      readonly refusalOptional: boolean;
      /** Optional fields of the result that every success carries. */
      readonly success: readonly string[];
      /** The refusal field's maxLength. */
      readonly refusalMax: number;
      /** A directed result goes to the requester alone; a published one is delivered. */
      readonly answer: "direct" | "deliver";
      readonly description: string;
    };

const KEYS: Record<"message" | "event", readonly string[]> = { message: ["result", "callers", "errors"], event: ["result", "refusal", "success"] };

type Props = { properties: Record<string, JsonSchema>; required: Set<string> };

function propsOf(schema: JsonSchema | undefined): Props {
  const properties = ((schema?.properties ?? {}) as Record<string, JsonSchema>) ?? {};
  return { properties, required: new Set((schema?.required ?? []) as string[]) };
}

/** A message's payload, or an event's data: the object whose fields a request and its answer carry. */
function fieldsOf(schema: JsonSchema, via: "message" | "event"): Props {
  return via === "message" ? propsOf(propsOf(schema).properties.payload) : propsOf(schema);
}

/** A string property's maxLength (on it, or on the scalar it refers to); 0 when unbounded. */
function maxLengthOf(p: JsonSchema | undefined, schemas: Map<string, JsonSchema>): number {
  const own = p?.maxLength ?? (typeof p?.$ref === "string" ? schemas.get(p.$ref)?.maxLength : undefined);
  return typeof own === "number" ? own : 0;
}

/** Whether a property schema is a string (directly, or a `$ref` to a string scalar). */
function isString(p: JsonSchema | undefined, schemas: Map<string, JsonSchema>): boolean {
  if (!p) return false;
  if (p.type === "string") return true;
  return typeof p.$ref === "string" && schemas.get(p.$ref)?.type === "string";
}

export function buildRequests(schemas: Map<string, JsonSchema>, tables: Tables, problems: Problems): RequestEntry[] {
  const messages = new Map(tables.messages.map((m) => [m.name, m]));
  const events = new Map(tables.events.map((e) => [e.name, e]));
  const errorCodes = new Set(((schemas.get("ErrorCode.json")?.enum ?? []) as string[]).map(String));
  const out: RequestEntry[] = [];
  const answered = new Map<string, string>();
  for (const [id, schema] of schemas) {
    const decl = schema["x-tau-request"];
    if (decl === undefined) continue;
    const model = typeNameOf(id);
    const messageName = schema["x-tau-message"];
    const eventName = schema["x-tau-event"];
    const via = typeof messageName === "string" ? "message" : typeof eventName === "string" ? "event" : undefined;
    const file = `spec/ (model ${model})`;
    if (via === undefined) {
      problems.add(file, "x-tau-request is declared on a model that is neither a wire message nor an event");
      continue;
    }
    if (typeof decl !== "object" || decl === null || Array.isArray(decl)) {
      problems.add(file, "x-tau-request must be a map: #{ result, callers, errors } on a message, #{ result, refusal } on an event");
      continue;
    }
    const d = decl as Record<string, unknown>;
    for (const key of Object.keys(d)) {
      if (!KEYS[via].includes(key)) problems.add(file, `x-tau-request on ${via === "message" ? "a wire message" : "an event"} takes ${KEYS[via].join(", ")}, not ${key}`);
    }
    const name = (via === "message" ? messageName : eventName) as string;
    const own = fieldsOf(schema, via);
    const description = typeof schema.description === "string" ? schema.description : "";
    if (via === "message") {
      const entry = messageRequest(file, name, model, d, own, description, messages, errorCodes, schemas, problems);
      if (entry) out.push(entry);
      continue;
    }
    const entry = eventRequest(file, name, model, d, own, description, events, schemas, problems);
    if (!entry) continue;
    const twice = answered.get(entry.result.name);
    if (twice !== undefined) problems.add(file, `event ${entry.result.name} already answers ${twice}; an event answers one request`);
    answered.set(entry.result.name, name);
    out.push(entry);
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function messageRequest(
  file: string,
  name: string,
  model: string,
  d: Record<string, unknown>,
  own: Props,
  description: string,
  messages: Map<string, Tables["messages"][number]>,
  errorCodes: Set<string>,
  schemas: Map<string, JsonSchema>,
  problems: Problems,
): RequestEntry | undefined {
  const info = messages.get(name);
  if (info?.direction !== "to_harness") problems.add(file, `request ${name} must be sent to the harness (x-tau-direction: to_harness)`);
  const callers = Array.isArray(d.callers) ? d.callers.map(String) : [];
  if (callers.length === 0) problems.add(file, `request ${name} needs callers: the peers that may send it (${REQUEST_CALLERS.join(", ")})`);
  for (const c of callers) if (!(REQUEST_CALLERS as readonly string[]).includes(c)) problems.add(file, `request ${name}: unknown caller ${c} (known: ${REQUEST_CALLERS.join(", ")})`);
  const errors = d.errors === undefined ? [] : Array.isArray(d.errors) ? d.errors.map(String) : [];
  for (const e of errors) if (!errorCodes.has(e)) problems.add(file, `request ${name}: ${e} is not an ErrorCode`);
  if (d.result === undefined) {
    if (errors.length > 0) problems.add(file, `notification ${name} is never answered, so it cannot declare errors`);
    return { via: "message", name, model, callers, errors, description };
  }
  const result = messages.get(String(d.result));
  if (!result) {
    problems.add(file, `request ${name}: its result ${String(d.result)} is not a wire message`);
    return undefined;
  }
  if (result.direction !== "from_harness") problems.add(file, `request ${name}: its result ${result.name} must come from the harness`);
  if (!own.required.has("request_id") || !isString(own.properties.request_id, schemas)) problems.add(file, `request ${name} needs a required request_id: Id (its answer is matched by it)`);
  const answer = fieldsOf(schemas.get(`${result.model}.json`) ?? {}, "message");
  if (!isString(answer.properties.request_id, schemas)) problems.add(file, `request ${name}: its result ${result.name} carries no request_id`);
  return { via: "message", name, model, result: { name: result.name, model: result.model }, callers, errors, description };
}

function eventRequest(
  file: string,
  name: string,
  model: string,
  d: Record<string, unknown>,
  own: Props,
  description: string,
  events: Map<string, Tables["events"][number]>,
  schemas: Map<string, JsonSchema>,
  problems: Problems,
): (RequestEntry & { via: "event" }) | undefined {
  const result = events.get(String(d.result));
  if (!result) {
    problems.add(file, `request ${name}: its result ${String(d.result)} is not an event`);
    return undefined;
  }
  const refusal = typeof d.refusal === "string" ? d.refusal : "";
  const answer = fieldsOf(schemas.get(`${result.model}.json`) ?? {}, "event");
  if (!own.required.has("request_id") || !isString(own.properties.request_id, schemas)) problems.add(file, `request ${name} needs a required request_id: Id (its answer is matched by it)`);
  if (!answer.required.has("request_id")) problems.add(file, `request ${name}: its result ${result.name} needs a required request_id`);
  if (!answer.required.has("ok") || answer.properties.ok?.type !== "boolean") problems.add(file, `request ${name}: its result ${result.name} needs a required ok: boolean`);
  if (refusal === "" || !isString(answer.properties[refusal], schemas)) problems.add(file, `request ${name}: refusal must name a text field of ${result.name} (the reason when ok is false)`);
  const refusalMax = maxLengthOf(answer.properties[refusal], schemas);
  if (isString(answer.properties[refusal], schemas) && refusalMax === 0) problems.add(file, `request ${name}: the refusal field ${refusal} of ${result.name} needs a maxLength`);
  const success = Array.isArray(d.success) ? d.success.map(String) : [];
  if (d.success !== undefined && !Array.isArray(d.success)) problems.add(file, `request ${name}: success must be a list of the result's fields`);
  for (const f of success) {
    if (!(f in answer.properties) || answer.required.has(f) || f === refusal) problems.add(file, `request ${name}: success names ${f}, which is not an optional field of ${result.name} (besides the refusal)`);
  }
  const directed = result.authority.persistence === "directed";
  if (directed && !result.authority.publishers.includes("harness")) problems.add(file, `request ${name}: its directed result ${result.name} must be sent by the harness`);
  return {
    via: "event",
    name,
    model,
    result: { name: result.name, model: result.model },
    refusal,
    refusalOptional: !answer.required.has(refusal),
    success,
    refusalMax,
    answer: directed ? "direct" : "deliver",
    description,
  };
}

const q = (s: string) => JSON.stringify(s);

export function emitRequests(header: string, requests: readonly RequestEntry[]): string {
  const lines = [header, 'import type * as T from "./types.js";', 'import type { EventName } from "./events.js";', 'import type { MessageName } from "./messages.js";', ""];
  lines.push(
    "/** Who may send a request that is a wire message (SPEC-wire-protocol, \"Requests\"). */",
    `export type RequestCaller = ${REQUEST_CALLERS.map(q).join(" | ")};`,
    "",
    "/** A request sent as a wire message; answered by `result` matched on `request_id`, or never (a notification). */",
    "export interface MessageRequestInfo {",
    '  readonly via: "message";',
    "  readonly name: MessageName;",
    "  readonly result: MessageName | undefined;",
    "  /** The peers that may send it; anyone else is refused. */",
    "  readonly callers: readonly RequestCaller[];",
    "  /** The `error` codes its handler may refuse it with. */",
    "  readonly errors: readonly T.ErrorCode[];",
    "}",
    "",
    "/** A request published as an event; answered by the event `result` with `ok`, and on a refusal its `refusal` field. */",
    "export interface EventRequestInfo {",
    '  readonly via: "event";',
    "  readonly name: EventName;",
    "  readonly result: EventName;",
    "  readonly refusal: string;",
    "  /** The longest reason the refusal field holds. */",
    "  readonly refusalMax: number;",
    "  /** Optional fields of the result that every success carries (an answer without them is refused). */",
    "  readonly success: readonly string[];",
    "  /** `direct`: the harness sends the result to the requester alone; `deliver`: it is published. */",
    '  readonly answer: "direct" | "deliver";',
    "}",
    "",
    "/** Every declared request, by the name of its message or event. */",
    "export const REQUESTS = {",
  );
  for (const r of requests) {
    if (r.description !== "") lines.push(`  /** ${r.description.split("\n").join(" ").replace(/\*\//g, "*\\/")} */`);
    if (r.via === "message") {
      const result = r.result ? q(r.result.name) : "undefined";
      lines.push(`  ${q(r.name)}: { via: "message", name: ${q(r.name)}, result: ${result}, callers: ${JSON.stringify(r.callers)}, errors: ${JSON.stringify(r.errors)} },`);
    } else {
      lines.push(`  ${q(r.name)}: { via: "event", name: ${q(r.name)}, result: ${q(r.result.name)}, refusal: ${q(r.refusal)}, refusalMax: ${r.refusalMax}, success: ${JSON.stringify(r.success)}, answer: ${q(r.answer)} },`);
    }
  }
  lines.push("} as const satisfies Record<string, MessageRequestInfo | EventRequestInfo>;", "");
  lines.push(
    "export type RequestName = keyof typeof REQUESTS;",
    "/** A request's descriptor, as `RequestType<P, R, E>` is to a JSON-RPC connection. */",
    "export type RequestType<N extends RequestName = RequestName> = (typeof REQUESTS)[N];",
    "",
  );
  const payload = (r: { via: "message" | "event"; model: string }) => (r.via === "message" ? `T.${r.model}["payload"]` : `T.${r.model}`);
  lines.push("/** A request as its handler is given it: the whole payload, `request_id` included. */", "export interface RequestPayloads {");
  for (const r of requests) lines.push(`  ${q(r.name)}: ${payload(r)};`);
  lines.push("}", "");
  lines.push("/** What a requester gives `request(...)`: the request without its `request_id`, which is minted. */", "export interface RequestParams {");
  for (const r of requests) lines.push(`  ${q(r.name)}: ${r.via === "message" && !r.result ? payload(r) : `Omit<${payload(r)}, "request_id">`};`);
  lines.push("}", "");
  lines.push(
    "/**",
    " * What `request(...)` resolves with and a `serve(...)` handler returns: the answer without",
    " * `request_id` (nor, for an event, `ok` and an optional reason), with the fields a success carries.",
    " */",
    "export interface RequestResults {",
  );
  for (const r of requests) {
    if (r.via === "message") lines.push(`  ${q(r.name)}: ${r.result ? `Omit<T.${r.result.model}["payload"], "request_id">` : "void"};`);
    else {
      const omitted = `Omit<T.${r.result.model}, "request_id" | "ok"${r.refusalOptional ? ` | ${q(r.refusal)}` : ""}>`;
      lines.push(`  ${q(r.name)}: ${r.success.length > 0 ? `${omitted} & Required<Pick<T.${r.result.model}, ${r.success.map(q).join(" | ")}>>` : omitted};`);
    }
  }
  lines.push("}", "");
  lines.push("/** How a request is refused: the `error` codes its handler may answer with, or an event's reason text. */", "export interface RequestRefusals {");
  for (const r of requests) lines.push(`  ${q(r.name)}: ${r.via === "event" ? "string" : r.errors.length > 0 ? r.errors.map(q).join(" | ") : "never"};`);
  lines.push("}", "");
  return lines.join("\n");
}
