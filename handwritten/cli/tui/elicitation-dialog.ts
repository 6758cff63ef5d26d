// An MCP server's request for input in the interactive UI (SPEC-mcp, "Elicitation"): the server's
// message and form as a dialog above the editor — [a] answer, [d] decline, [c] cancel — then each
// field in turn, typed into the editor and taken with Enter (never kept in the prompt history).
// tau's own question before a server's tool runs (the entry's `ask`) is shown the same way: [a] allow, [d] deny.
// The first UI to answer answers; `mcp.elicitation_resolved` closes the dialog everywhere.
import type { McpElicitationField, McpElicitationRequested } from "../../../generated/index.js";
import type { StyledLine, Theme } from "../ui/index.js";
import type { Delivery } from "../session-client.js";
import type { Editor } from "./editor.js";
import { dialogRows, type Dialog, type UiContext } from "./context.js";

interface Asked {
  readonly request: McpElicitationRequested;
  /** Who asks: `mcp server SERVER` for instance `mcp-SERVER`, else `extension INSTANCE`. */
  readonly server: string;
}

/** A typed answer read as the field's kind, or what is wrong with it. */
export function readValue(f: McpElicitationField, text: string): { value: unknown } | { problem: string } | { skip: true } {
  const t = text.trim();
  if (t === "") return f.required ? { problem: `${f.name} is required` } : { skip: true };
  const options = f.options ?? [];
  const pick = (s: string): string | undefined => {
    const n = Number(s);
    if (Number.isInteger(n) && n >= 1 && n <= options.length) return options[n - 1]?.value;
    return options.find((o) => o.value === s)?.value;
  };
  switch (f.kind) {
    case "boolean":
      if (/^(y|yes|true)$/i.test(t)) return { value: true };
      if (/^(n|no|false)$/i.test(t)) return { value: false };
      return { problem: "answer y or n" };
    case "number":
    case "integer": {
      const n = Number(t);
      if (!Number.isFinite(n) || (f.kind === "integer" && !Number.isInteger(n))) return { problem: `type ${f.kind === "integer" ? "a whole number" : "a number"}` };
      if ((f.minimum !== undefined && n < f.minimum) || (f.maximum !== undefined && n > f.maximum)) return { problem: `type a number from ${f.minimum ?? "…"} to ${f.maximum ?? "…"}` };
      return { value: n };
    }
    case "choice": {
      const v = pick(t);
      return v === undefined ? { problem: "type an option's number or value" } : { value: v };
    }
    case "choices": {
      const picked = t.split(",").map((s) => pick(s.trim()));
      if (picked.some((v) => v === undefined)) return { problem: "type options' numbers or values, separated by commas" };
      return { value: [...new Set(picked as string[])] };
    }
    case "string":
      if ((f.min_length !== undefined && t.length < f.min_length) || (f.max_length !== undefined && t.length > f.max_length)) return { problem: `type ${f.min_length ?? 0} to ${f.max_length ?? "any number of"} characters` };
      return { value: t };
  }
}

/** How a field is asked for: its name, title, kind, bounds and options. */
function fieldLine(f: McpElicitationField, i: number, n: number): string[] {
  const kind = f.kind === "choice" ? "pick one" : f.kind === "choices" ? "pick any, comma-separated" : f.kind === "boolean" ? "y/n" : `${f.kind}${f.format ? `, ${f.format}` : ""}`;
  const head = `  field ${i + 1} of ${n}: ${f.title ?? f.name}${f.title ? ` (${f.name})` : ""} — ${kind}${f.required ? ", required" : ", Enter skips"}${f.default !== undefined ? `; the server suggests ${f.default}` : ""}`;
  const options = (f.options ?? []).map((o, k) => `    ${k + 1}. ${o.label ?? o.value}${o.label !== undefined ? ` (${o.value})` : ""}`);
  return [head, ...(f.description !== undefined ? [`    ${f.description}`] : []), ...options];
}

export class ElicitationDialog implements Dialog {
  private readonly asked: Asked[] = [];
  /** While the shown request's fields are being answered: the next field, and the values so far. */
  private answering: { field: number; values: Record<string, unknown> } | undefined;

  constructor(private readonly ui: UiContext) {}

  get open(): boolean {
    return this.asked.length > 0;
  }

  /** An `mcp.elicitation_*` event; true when the dialog changed. */
  deliver(d: Delivery): boolean {
    const ev = d.event;
    if (ev.name === "mcp.elicitation_requested") {
      if (d.replay || this.asked.some((a) => a.request.elicitation_id === ev.data.elicitation_id)) return false;
      // An MCP server's instance is `mcp-SERVER`; another extension asking (gmail's sends) is named as one.
      const instance = d.publisher.instance ?? "";
      this.asked.push({ request: ev.data, server: instance.startsWith("mcp-") ? `mcp server ${instance.slice(4)}` : `extension ${instance}` });
      return true;
    }
    if (ev.name !== "mcp.elicitation_resolved") return false;
    const i = this.asked.findIndex((a) => a.request.elicitation_id === ev.data.elicitation_id);
    if (i < 0) return false;
    const [a] = this.asked.splice(i, 1);
    if (i === 0) this.answering = undefined;
    const approval = a?.request.purpose === "approval";
    const what = ev.data.action === "accept" ? (approval ? "allowed" : "answered") : ev.data.action === "decline" ? (approval ? "denied" : "declined") : "cancelled";
    const subject = approval ? "the call" : "its request for input";
    this.ui.note(ev.data.action === "cancel" ? "warning" : "info", `${a?.server ?? "?"}: ${subject} was ${what}${ev.data.reason !== undefined ? ` (${ev.data.reason})` : ""}`);
    return true;
  }

  /** [a], [d] or [c] while the request is shown; its fields are the editor's to type. */
  key(text: string, editor: Editor): boolean {
    const a = this.asked[0];
    if (a === undefined || this.answering !== undefined || editor.text.trimStart().startsWith(":")) return false;
    switch (text.toLowerCase()) {
      case "a":
        if (a.request.fields.length === 0) return this.send(a, "accept", {});
        this.answering = { field: 0, values: {} };
        editor.setText("");
        this.ui.schedule();
        return true;
      case "d":
        return this.send(a, "decline");
      case "c":
        return this.send(a, "cancel");
      default:
        return false;
    }
  }

  /** Enter while a field is asked: the typed text is that field's answer (`:cancel` cancels). True when taken. */
  submit(text: string): boolean {
    const a = this.asked[0];
    const at = this.answering;
    if (a === undefined || at === undefined) return false;
    if (text.trim() === ":cancel") return this.send(a, "cancel");
    const f = a.request.fields[at.field] as McpElicitationField;
    const read = readValue(f, text);
    if ("problem" in read) {
      this.ui.note("warning", `${a.server}: ${read.problem}`);
      return true;
    }
    if ("value" in read) at.values[f.name] = read.value;
    at.field++;
    if (at.field >= a.request.fields.length) return this.send(a, "accept", at.values);
    this.ui.schedule();
    return true;
  }

  private send(a: Asked, action: "accept" | "decline" | "cancel", values?: Record<string, unknown>): boolean {
    this.ui.client()?.emit("mcp.elicitation_answer", { elicitation_id: a.request.elicitation_id, action, ...(values !== undefined ? { values } : {}) });
    this.answering = undefined;
    this.ui.schedule();
    return true;
  }

  rows(width: number, theme: Theme): StyledLine[] {
    const a = this.asked[0];
    if (a === undefined) return [];
    const r = a.request;
    const more = this.asked.length > 1 ? ` (1 of ${this.asked.length})` : "";
    if (r.purpose === "approval") return dialogRows([`${a.server}${more}: ${r.message}`, "  [a] allow this call   [d] deny"], width, theme);
    const lines = [`${a.server} asks${more}: ${r.message}`];
    if (this.answering === undefined) {
      for (const [i, f] of r.fields.entries()) lines.push(`  ${i + 1}. ${f.title ?? f.name}${f.required ? " (required)" : ""}${f.description !== undefined ? ` — ${f.description}` : ""}`);
      lines.push("  [a] answer   [d] decline   [c] cancel");
    } else {
      lines.push(...fieldLine(r.fields[this.answering.field] as McpElicitationField, this.answering.field, r.fields.length), "  type the answer and press Enter (:cancel cancels)");
    }
    return dialogRows(lines, width, theme);
  }
}
