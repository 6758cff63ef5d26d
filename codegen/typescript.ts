// JSON Schema (the subset TypeSpec emits for tau) → TypeScript declarations.
// Anything outside that subset fails codegen naming the schema (DECISION-schema-to-typescript).
import type { JsonSchema } from "./typespec.js";
import { CodegenError } from "./errors.js";

const IGNORED_KEYWORDS = new Set([
  // Annotations for readers (the configuration reference on the docs site); no effect on types.
  "default",
  "examples",
  "$schema",
  "$id",
  "description",
  "title",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minItems",
  "maxItems",
  "format",
  "$defs",
]);

/** The TypeScript name of a schema id such as `HelloMessage.json`. */
export function typeNameOf(id: string): string {
  return id.replace(/\.json$/, "");
}

export function emitTypes(schemas: Map<string, JsonSchema>): string {
  const out: string[] = [];
  for (const [id, schema] of schemas) {
    const name = typeNameOf(id);
    const doc = docComment(schema, "");
    const body = typeOf(schema, schema, id, "");
    out.push(`${doc}export type ${name} = ${body};\n`);
  }
  return out.join("\n");
}

function docComment(schema: JsonSchema, indent: string): string {
  const d = schema.description;
  if (typeof d !== "string" || d === "") return "";
  const safe = d.replace(/\*\//g, "*\\/");
  const lines = safe.split("\n");
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} * ${l}`.trimEnd()).join("\n")}\n${indent} */\n`;
}

function typeOf(schema: JsonSchema, root: JsonSchema, id: string, indent: string): string {
  for (const key of Object.keys(schema)) {
    if (IGNORED_KEYWORDS.has(key) || key.startsWith("x-tau-")) continue;
    if (!KNOWN.has(key)) throw new CodegenError(`generated/schemas/${id}`, `unsupported JSON Schema keyword "${key}"`);
  }
  if (typeof schema.$ref === "string") return refName(schema.$ref, root, id, indent);
  if ("const" in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (Array.isArray(schema.anyOf)) {
    return (schema.anyOf as JsonSchema[]).map((s) => typeOf(s, root, id, indent)).join(" | ");
  }
  switch (schema.type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      return `Array<${typeOf((schema.items ?? {}) as JsonSchema, root, id, indent)}>`;
    case "object":
      return objectType(schema, root, id, indent);
    case undefined:
      if (Object.keys(schema).filter((k) => !IGNORED_KEYWORDS.has(k)).length === 0) return "unknown";
  }
  throw new CodegenError(`generated/schemas/${id}`, `unsupported schema shape ${JSON.stringify(schema).slice(0, 120)}`);
}

const KNOWN = new Set(["$ref", "const", "enum", "anyOf", "type", "items", "properties", "required", "unevaluatedProperties"]);

function refName(ref: string, root: JsonSchema, id: string, indent: string): string {
  if (ref.startsWith("#/$defs/")) {
    const defs = (root.$defs ?? {}) as Record<string, JsonSchema>;
    const def = defs[ref.slice("#/$defs/".length)];
    if (!def) throw new CodegenError(`generated/schemas/${id}`, `dangling reference ${ref}`);
    return typeOf(def, root, id, indent);
  }
  if (!/^[A-Za-z0-9]+\.json$/.test(ref)) throw new CodegenError(`generated/schemas/${id}`, `unsupported reference ${ref}`);
  return typeNameOf(ref);
}

function objectType(schema: JsonSchema, root: JsonSchema, id: string, indent: string): string {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const extra = schema.unevaluatedProperties as JsonSchema | undefined;
  const sealed = extra !== undefined && typeof extra === "object" && "not" in extra;
  const keys = Object.keys(props);
  let extraType: string | undefined;
  if (!sealed) {
    extraType = extra === undefined ? "unknown" : typeOf(extra, root, id, indent);
  }
  if (keys.length === 0) {
    if (sealed) return "Record<string, never>";
    return `Record<string, ${extraType}>`;
  }
  const inner = `${indent}  `;
  const lines = keys.map((key) => {
    const prop = props[key] as JsonSchema;
    const opt = required.has(key) ? "" : "?";
    const safeKey = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : JSON.stringify(key);
    return `${docComment(prop, inner)}${inner}${safeKey}${opt}: ${typeOf(prop, root, id, inner)};`;
  });
  if (!sealed) lines.push(`${inner}[key: string]: ${extraType};`);
  return `{\n${lines.join("\n")}\n${indent}}`;
}
