// A server's questions to the user (SPEC-mcp, "Elicitation"): an `elicitation/create` in form mode
// becomes `mcp.elicitation_requested` for the attached interactive UIs; the first
// `mcp.elicitation_answer` is checked against the form and goes back to the server. A form tau
// cannot show is declined; an answer that does not fit it, no answer within ELICITATION_MAX_WAIT_MS,
// and a request the server withdraws are cancelled. `mcp.elicitation_resolved` closes the dialogs.
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpElicitationAction, McpElicitationField, McpElicitationOption } from "../../../generated/index.js";
import { AwaitedAnswers, type Extension } from "../../sdk/index.js";

/** An elicitation nobody answers in this long is cancelled: a tool call never waits for good. */
export const ELICITATION_MAX_WAIT_MS = 10 * 60_000;
const MAX_FIELDS = 32;
const MAX_OPTIONS = 64;
const TEXT_MAX_CHARS = 1024;

type Schema = ElicitRequestFormParams["requestedSchema"];
type Property = Schema["properties"][string];
type Content = NonNullable<ElicitResult["content"]>;

const cut = (s: string): string => (s.length > TEXT_MAX_CHARS ? `${s.slice(0, TEXT_MAX_CHARS - 1)}…` : s);

/** The form's fields as tau shows them, or why tau cannot show it. */
export function formFields(schema: Schema): McpElicitationField[] | string {
  const entries = Object.entries(schema.properties);
  if (entries.length > MAX_FIELDS) return `the form has ${entries.length} fields, more than ${MAX_FIELDS}`;
  const required = new Set(schema.required ?? []);
  const fields: McpElicitationField[] = [];
  for (const [name, p] of entries) {
    const field = fieldOf(name, p, required.has(name));
    if (typeof field === "string") return `field ${JSON.stringify(cut(name))}: ${field}`;
    fields.push(field);
  }
  return fields;
}

function fieldOf(name: string, p: Property, required: boolean): McpElicitationField | string {
  const base = { name: cut(name), required, ...(p.title !== undefined ? { title: cut(p.title) } : {}), ...(p.description !== undefined ? { description: cut(p.description) } : {}) };
  const withDefault = (d: unknown) => (d === undefined ? {} : { default: cut(Array.isArray(d) ? d.join(", ") : String(d)) });
  const options = (o: McpElicitationOption[]): McpElicitationOption[] | string => (o.length > MAX_OPTIONS ? `more than ${MAX_OPTIONS} options` : o.map((x) => ({ value: cut(x.value), ...(x.label !== undefined ? { label: cut(x.label) } : {}) })));
  if (p.type === "boolean") return { ...base, kind: "boolean", ...withDefault(p.default) };
  if (p.type === "number" || p.type === "integer") return { ...base, kind: p.type, ...(p.minimum !== undefined ? { minimum: p.minimum } : {}), ...(p.maximum !== undefined ? { maximum: p.maximum } : {}), ...withDefault(p.default) };
  if (p.type === "array") {
    const items = "enum" in p.items ? p.items.enum.map((value) => ({ value })) : p.items.anyOf.map((x) => ({ value: x.const, label: x.title }));
    const o = options(items);
    if (typeof o === "string") return o;
    return { ...base, kind: "choices", options: o, ...(p.minItems !== undefined ? { min_length: p.minItems } : {}), ...(p.maxItems !== undefined ? { max_length: p.maxItems } : {}), ...withDefault(p.default) };
  }
  if ("oneOf" in p || "enum" in p) {
    const names = "enumNames" in p ? p.enumNames : undefined;
    const o = options("oneOf" in p ? p.oneOf.map((x) => ({ value: x.const, label: x.title })) : p.enum.map((value, i) => ({ value, ...(names?.[i] !== undefined ? { label: names[i] } : {}) })));
    if (typeof o === "string") return o;
    return { ...base, kind: "choice", options: o, ...withDefault(p.default) };
  }
  if (!("minLength" in p || "maxLength" in p || "format" in p) && p.type !== "string") return "a kind of field tau cannot show";
  const t = p as { format?: string; minLength?: number; maxLength?: number; default?: string };
  return { ...base, kind: "string", ...(t.format !== undefined ? { format: t.format } : {}), ...(t.minLength !== undefined ? { min_length: t.minLength } : {}), ...(t.maxLength !== undefined ? { max_length: t.maxLength } : {}), ...withDefault(t.default) };
}

/** An answer's values checked against the form: the content for the server, or what is wrong. */
export function checkAnswer(fields: readonly McpElicitationField[], values: Readonly<Record<string, unknown>>): Content | string {
  const content: Content = {};
  for (const name of Object.keys(values)) if (!fields.some((f) => f.name === name)) return `${name} is not a field of the form`;
  for (const f of fields) {
    const v = values[f.name];
    if (v === undefined) {
      if (f.required) return `${f.name} is required`;
      continue;
    }
    const wrong = valueProblem(f, v);
    if (wrong !== undefined) return `${f.name}: ${wrong}`;
    content[f.name] = v as Content[string];
  }
  return content;
}

function valueProblem(f: McpElicitationField, v: unknown): string | undefined {
  const values = new Set((f.options ?? []).map((o) => o.value));
  switch (f.kind) {
    case "boolean":
      return typeof v === "boolean" ? undefined : "not true or false";
    case "number":
    case "integer":
      if (typeof v !== "number" || !Number.isFinite(v) || (f.kind === "integer" && !Number.isInteger(v))) return `not ${f.kind === "integer" ? "an integer" : "a number"}`;
      if ((f.minimum !== undefined && v < f.minimum) || (f.maximum !== undefined && v > f.maximum)) return `out of ${f.minimum ?? "…"}–${f.maximum ?? "…"}`;
      return undefined;
    case "choice":
      return typeof v === "string" && values.has(v) ? undefined : "not one of the options";
    case "choices":
      if (!Array.isArray(v) || !v.every((x) => typeof x === "string" && values.has(x))) return "not a list of the options";
      if ((f.min_length !== undefined && v.length < f.min_length) || (f.max_length !== undefined && v.length > f.max_length)) return "too few or too many picked";
      return undefined;
    case "string":
      if (typeof v !== "string") return "not text";
      if ((f.min_length !== undefined && v.length < f.min_length) || (f.max_length !== undefined && v.length > f.max_length)) return "too short or too long";
      return undefined;
  }
}

/** The elicitations of one server waiting for a UI's answer. */
export class Elicitations {
  private readonly answers = new AwaitedAnswers<{ action: McpElicitationAction; values?: Record<string, unknown>; reason?: string }>();

  constructor(
    private readonly ext: Extension,
    private readonly say: (level: "info" | "warning", text: string) => void,
    private readonly maxWaitMs = ELICITATION_MAX_WAIT_MS,
  ) {
    ext.subscribe([], ["mcp.elicitation_answer"]);
    ext.on("mcp.elicitation_answer", (e) => {
      if (e.replay) return;
      this.answers.answer(e.data.elicitation_id, { action: e.data.action, ...(e.data.values !== undefined ? { values: e.data.values } : {}) });
    });
  }

  /**
   * Whether the user allows a call (SPEC-mcp, "Asking before a call"): a question of tau's own,
   * shown as the server's requests are; true only for an answer that allows it.
   */
  async allow(message: string, callId: string, signal: AbortSignal): Promise<boolean> {
    return (await this.ask({ message, requestedSchema: { type: "object", properties: {} } }, signal, { purpose: "approval", call_id: callId })).action === "accept";
  }

  /** Asks the user; `signal` aborts when the server withdraws the request. */
  async ask(params: ElicitRequestFormParams, signal: AbortSignal, approval?: { purpose: "approval"; call_id: string }): Promise<ElicitResult> {
    const fields = formFields(params.requestedSchema);
    if (typeof fields === "string") {
      this.say("warning", `declined a request for input: ${fields}, which tau cannot show`);
      return { action: "decline" };
    }
    const { id, answer } = await this.answers.ask((id) => void this.ext.emit("mcp.elicitation_requested", { elicitation_id: id, message: cut(params.message), fields, ...(approval ?? {}) }), {
      timeoutMs: this.maxWaitMs,
      onTimeout: { action: "cancel", reason: `nobody answered within ${Math.round(this.maxWaitMs / 1000)} s` },
      signal,
      onAbort: { action: "cancel", reason: "the server withdrew it" },
    });
    let result: ElicitResult = { action: answer.action };
    let reason = answer.reason;
    if (answer.action === "accept") {
      const content = checkAnswer(fields, answer.values ?? {});
      if (typeof content === "string") {
        result = { action: "cancel" };
        reason = `the answer did not fit the form (${content})`;
      } else result = { action: "accept", content };
    }
    void this.ext.emit("mcp.elicitation_resolved", { elicitation_id: id, action: result.action, ...(reason !== undefined ? { reason: cut(reason) } : {}) });
    return result;
  }
}
