// JSON Schema (as emitted from spec/) → readable type names and field tables for the site.
import type MarkdownIt from "markdown-it";
import type { JsonSchema } from "../typespec.js";
import { esc } from "./html.js";
import { renderInline, type RenderEnv } from "./markdown.js";

export interface TypeContext {
  page: string;
  /** `$id` of a shared schema → an href from `page` to where it is described (and its display name). */
  refLink: (id: string, from: string) => { href: string; name: string } | undefined;
  /** The `$defs` of the document being rendered. */
  defs: Record<string, JsonSchema>;
  /** Collects the `$id`s referenced while rendering (for "used by" lists). */
  used?: Set<string>;
}

export interface FieldRow {
  name: string;
  depth: number;
  typeHtml: string;
  required: boolean;
  description: string;
}

function isObj(v: unknown): v is JsonSchema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function props(s: JsonSchema): Array<[string, JsonSchema]> {
  const p = s.properties;
  if (!isObj(p)) return [];
  return Object.entries(p).filter((e): e is [string, JsonSchema] => isObj(e[1]));
}

/** True for an object schema that declares named properties (rendered as nested rows). */
export function hasFields(s: JsonSchema): boolean {
  return props(s).length > 0;
}

function constraints(s: JsonSchema): string[] {
  const out: string[] = [];
  const min = s.minimum;
  const max = s.maximum;
  if (typeof min === "number" && typeof max === "number") out.push(`${min} … ${max}`);
  else if (typeof min === "number") out.push(`≥ ${min}`);
  else if (typeof max === "number") out.push(`≤ ${max}`);
  if (typeof s.minLength === "number") out.push(`≥ ${s.minLength} chars`);
  if (typeof s.maxLength === "number") out.push(`≤ ${s.maxLength} chars`);
  if (typeof s.minItems === "number") out.push(`≥ ${s.minItems} items`);
  if (typeof s.maxItems === "number") out.push(`≤ ${s.maxItems} items`);
  if (typeof s.pattern === "string") out.push(`pattern ${s.pattern}`);
  if (typeof s.format === "string") out.push(`format ${s.format}`);
  return out;
}

function withConstraints(html: string, s: JsonSchema): string {
  const c = constraints(s);
  return c.length === 0 ? html : `${html} <span class="constraint">${esc(c.join(", "))}</span>`;
}

function mapType(extra: unknown, ctx: TypeContext): string | undefined {
  if (extra === undefined) return undefined;
  if (extra === true || (isObj(extra) && Object.keys(extra).length === 0)) return "map&lt;string, unknown&gt;";
  if (isObj(extra) && isObj(extra.not) && Object.keys(extra.not).length === 0) return undefined;
  if (isObj(extra)) return `map&lt;string, ${typeHtml(extra, ctx)}&gt;`;
  return undefined;
}

/** A readable type for a schema: shared models become links, unions are joined with `|`. */
export function typeHtml(s: JsonSchema, ctx: TypeContext): string {
  const ref = s.$ref;
  if (typeof ref === "string") {
    if (ref.startsWith("#/$defs/")) {
      const name = ref.slice("#/$defs/".length);
      const def = ctx.defs[name];
      return def ? typeHtml(def, ctx) : `<code>${esc(name)}</code>`;
    }
    ctx.used?.add(ref);
    const target = ctx.refLink(ref, ctx.page);
    if (target) return `<a class="type" href="${esc(target.href)}"><code>${esc(target.name)}</code></a>`;
    return `<code>${esc(ref.replace(/\.json$/, ""))}</code>`;
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    const alts = s[key];
    if (Array.isArray(alts)) {
      return withConstraints(alts.filter(isObj).map((a) => typeHtml(a, ctx)).join(" | "), s);
    }
  }
  if ("const" in s) return `<code>${esc(JSON.stringify(s.const))}</code>`;
  if (Array.isArray(s.enum)) return s.enum.map((v) => `<code>${esc(JSON.stringify(v))}</code>`).join(" | ");
  const type = s.type;
  if (Array.isArray(type)) return withConstraints(type.map((t) => esc(String(t))).join(" | "), s);
  if (type === "array") {
    const items = isObj(s.items) ? typeHtml(s.items, ctx) : "unknown";
    const wrapped = items.includes(" | ") ? `(${items})` : items;
    return withConstraints(`${wrapped}[]`, s);
  }
  if (type === "object") {
    if (hasFields(s)) return "object";
    const m = mapType(s.unevaluatedProperties ?? s.additionalProperties, ctx);
    return m ?? "object (no fields)";
  }
  if (typeof type === "string") return withConstraints(esc(type), s);
  return "unknown";
}

/** Rows for an object's properties, with inline object properties flattened as `parent.child`. */
export function fieldRows(s: JsonSchema, ctx: TypeContext, md: MarkdownIt, env: RenderEnv, prefix = "", depth = 0): FieldRow[] {
  const required = new Set(Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === "string") : []);
  const rows: FieldRow[] = [];
  for (const [name, p] of props(s)) {
    const full = `${prefix}${name}`;
    rows.push({
      name: full,
      depth,
      typeHtml: typeHtml(p, ctx),
      required: required.has(name),
      description: typeof p.description === "string" ? renderInline(md, p.description, env) : "",
    });
    if (depth < 4 && hasFields(p)) rows.push(...fieldRows(p, ctx, md, env, `${full}.`, depth + 1));
    else if (depth < 4 && p.type === "array" && isObj(p.items) && hasFields(p.items)) {
      rows.push(...fieldRows(p.items, ctx, md, env, `${full}[].`, depth + 1));
    }
  }
  return rows;
}

export function fieldTable(rows: FieldRow[], emptyText: string): string {
  if (rows.length === 0) return `<p class="muted">${esc(emptyText)}</p>`;
  const body = rows
    .map(
      (r) =>
        `<tr><td class="field depth-${r.depth}"><code>${esc(r.name)}</code></td><td>${r.typeHtml}</td><td class="req">${r.required ? "required" : "optional"}</td><td>${r.description}</td></tr>`,
    )
    .join("\n");
  return `<table class="fields">\n<thead><tr><th>field</th><th>type</th><th>required</th><th>description</th></tr></thead>\n<tbody>\n${body}\n</tbody>\n</table>`;
}

export function defsOf(s: JsonSchema): Record<string, JsonSchema> {
  const d = s.$defs;
  if (!isObj(d)) return {};
  const out: Record<string, JsonSchema> = {};
  for (const [k, v] of Object.entries(d)) if (isObj(v)) out[k] = v;
  return out;
}
