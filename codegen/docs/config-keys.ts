// The configuration files' keys, flattened from the schemas spec/config.tsp compiles to: one row
// per key with its path, a plain type, its default and an example (the schema's `default` and
// `examples` annotations), for the configuration reference of the documentation site.
import type { JsonSchema } from "../typespec.js";

export interface ConfigKey {
  /** The key's path in its file: `editor.max_lines`, `extensions[].name`, `providers.NAME.models`. */
  readonly path: string;
  readonly type: string;
  readonly required: boolean;
  readonly description: string;
  readonly default?: unknown;
  readonly example?: unknown;
  /** A section (a map of further keys) rather than a value. */
  readonly section: boolean;
}

/** What the keys of a map stand for, by the map's key. */
const PLACEHOLDERS: Record<string, string> = { providers: "NAME", model_info: "MODEL", roles: "ROLE" };

function isObj(v: unknown): v is JsonSchema {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The schemas a `$ref` may name: other documents by `$id`, and the root document's `$defs`. */
export interface Refs {
  readonly schemas: ReadonlyMap<string, JsonSchema>;
  readonly defs: Readonly<Record<string, JsonSchema>>;
}

/** A property with its `$ref` followed; the property's own fields win. */
export function resolveRef(s: JsonSchema, refs: Refs, depth = 0): JsonSchema {
  const ref = s.$ref;
  if (typeof ref !== "string" || depth > 8) return s;
  const target = ref.startsWith("#/$defs/") ? refs.defs[ref.slice("#/$defs/".length)] : refs.schemas.get(ref);
  if (!isObj(target)) return s;
  const { $ref: _ref, ...own } = s;
  const { $id: _id, $schema: _schema, ...base } = resolveRef(target, refs, depth + 1);
  return { ...base, ...own };
}

function fields(s: JsonSchema): Array<[string, JsonSchema]> {
  return isObj(s.properties) ? Object.entries(s.properties).filter((e): e is [string, JsonSchema] => isObj(e[1])) : [];
}

/** The schema of a map's values, when the object is a map (a TypeSpec `Record`). */
function mapValues(s: JsonSchema): JsonSchema | "any" | undefined {
  if (fields(s).length > 0) return undefined;
  const extra = s.unevaluatedProperties ?? s.additionalProperties;
  if (extra === true || (isObj(extra) && Object.keys(extra).length === 0)) return "any";
  if (isObj(extra) && !isObj(extra.not)) return extra;
  return undefined;
}

function range(s: JsonSchema): string {
  const { minimum: min, maximum: max } = s;
  if (typeof min === "number" && typeof max === "number") return ` ${min}–${max}`;
  if (typeof min === "number") return ` ≥ ${min}`;
  if (typeof max === "number") return ` ≤ ${max}`;
  return "";
}

/** A plain type: `integer 1–1000`, `list of string`, `one of auto, none`, `map of string → …`. */
export function plainType(p: JsonSchema, refs: Refs): string {
  const s = resolveRef(p, refs);
  if (Array.isArray(s.enum)) return `one of ${s.enum.map(String).join(", ")}`;
  for (const key of ["anyOf", "oneOf"] as const) {
    const alts = s[key];
    if (Array.isArray(alts)) return alts.filter(isObj).map((a) => plainType(a, refs)).join(" or ");
  }
  switch (s.type) {
    case "string":
      return `string${typeof s.maxLength === "number" ? ` (≤ ${s.maxLength} characters)` : ""}${typeof s.pattern === "string" && s.pattern.startsWith("^https?") ? ", an http(s) URL" : ""}`;
    case "integer":
      return `integer${range(s)}`;
    case "number":
      return `number${range(s)}`;
    case "boolean":
      return "boolean";
    case "array": {
      const items = isObj(s.items) ? resolveRef(s.items, refs) : {};
      const what = fields(items).length > 0 ? "entries (keys below)" : plainType(items, refs);
      return `list of ${what}${typeof s.maxItems === "number" ? `, at most ${s.maxItems}` : ""}`;
    }
    case "object": {
      const values = mapValues(s);
      if (values === "any") return "map (any values)";
      if (values !== undefined) {
        const v = resolveRef(values, refs);
        return fields(v).length > 0 ? "map of name → entry (keys below)" : `map of name → ${plainType(v, refs)}`;
      }
      return "section (keys below)";
    }
    default:
      return "any";
  }
}

/** Every key of a configuration file's schema, parents before their children, in schema order. */
export function configKeys(root: JsonSchema, schemas: ReadonlyMap<string, JsonSchema>): ConfigKey[] {
  const refs: Refs = { schemas, defs: isObj(root.$defs) ? (root.$defs as Record<string, JsonSchema>) : {} };
  const out: ConfigKey[] = [];
  const walk = (s: JsonSchema, prefix: string, depth: number) => {
    if (depth > 6) return;
    const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
    for (const [name, raw] of fields(s)) {
      const p = resolveRef(raw, refs);
      const path = `${prefix}${name}`;
      const examples = Array.isArray(p.examples) ? p.examples : [];
      const values = p.type === "object" ? mapValues(p) : undefined;
      const entry = values !== undefined && values !== "any" ? resolveRef(values, refs) : undefined;
      const items = p.type === "array" && isObj(p.items) ? resolveRef(p.items, refs) : undefined;
      const hasChildren = fields(p).length > 0 || (entry !== undefined && fields(entry).length > 0) || (items !== undefined && fields(items).length > 0);
      out.push({
        path,
        type: plainType(raw, refs),
        required: required.has(name),
        description: typeof p.description === "string" ? p.description : "",
        ...("default" in p ? { default: p.default } : {}),
        ...(examples.length > 0 ? { example: examples[0] } : {}),
        section: hasChildren,
      });
      if (fields(p).length > 0) walk(p, `${path}.`, depth + 1);
      else if (entry !== undefined && fields(entry).length > 0) walk(entry, `${path}.${PLACEHOLDERS[name] ?? "KEY"}.`, depth + 1);
      else if (items !== undefined && fields(items).length > 0) walk(items, `${path}[].`, depth + 1);
    }
  };
  walk(root, "", 0);
  return out;
}

const PLAIN = /^[A-Za-z_./~][A-Za-z0-9_ ./~*:@-]*$/;

/** A value as YAML on one line (flow style for lists and maps). */
export function yamlValue(v: unknown): string {
  if (typeof v === "string") {
    const plain = PLAIN.test(v) && !/^(true|false|null|yes|no|on|off|~)$/i.test(v) && !v.endsWith(" ") && !v.includes(": ") && !v.includes(" #");
    return plain ? v : JSON.stringify(v);
  }
  if (Array.isArray(v)) return `[${v.map(yamlValue).join(", ")}]`;
  if (isObj(v)) return `{${Object.entries(v).map(([k, x]) => `${k}: ${yamlValue(x)}`).join(", ")}}`;
  return String(v);
}

/**
 * A YAML snippet setting `path` to `value` in its file, nested as the file nests it: map
 * placeholders get a sample name and a `[]` segment becomes a list item.
 */
export function yamlSnippet(path: string, value: unknown): string {
  const segs = path.split(".");
  const lines: string[] = [];
  let indent = "";
  segs.forEach((seg, i) => {
    const last = i === segs.length - 1;
    const list = seg.endsWith("[]");
    const key = list ? seg.slice(0, -2) : /^[A-Z]+$/.test(seg) ? SAMPLE_NAMES[seg] ?? seg.toLowerCase() : seg;
    if (last) {
      lines.push(`${indent}${key}: ${yamlValue(value)}`);
      return;
    }
    lines.push(`${indent}${key}:`);
    indent += "  ";
    if (list) {
      // The next key is the first of a list entry.
      const next = segs[i + 1] as string;
      segs[i + 1] = `\u0000${next}`;
      indent += "  ";
    }
  });
  // A list entry's first key carries the dash, two columns to the left of its own indent.
  return lines
    .map((l) => {
      const at = l.indexOf("\u0000");
      return at < 0 ? l : `${l.slice(0, at - 2)}- ${l.slice(at + 1)}`;
    })
    .join("\n");
}

const SAMPLE_NAMES: Record<string, string> = { NAME: "example", MODEL: "model-large", ROLE: "reviewer", KEY: "key" };
