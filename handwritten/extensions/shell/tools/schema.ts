// A small validator for the JSON Schema subset the tool parameters use, so the schema the model
// sees is also the one that is enforced, with messages that name the argument. Unknown keywords are
// a programming error, reported when a tool is defined (see `defineParameters`).
import type { JsonSchema } from "./types.js";
import { ToolError } from "./errors.js";

const KNOWN_KEYWORDS = new Set([
  "type",
  "description",
  "default",
  "properties",
  "required",
  "additionalProperties",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "minItems",
  "maxItems",
  "items",
]);
const KNOWN_TYPES = new Set(["object", "string", "integer", "boolean", "array"]);

/** Checks that a schema only uses the supported subset, objects are sealed, and every bound is set. */
export function defineParameters<T extends JsonSchema>(schema: T): T {
  checkSchema(schema, "$");
  if (schema.type !== "object") throw new Error("tool parameters must be an object schema");
  return schema;
}

function checkSchema(schema: JsonSchema, where: string): void {
  for (const key of Object.keys(schema)) {
    if (!KNOWN_KEYWORDS.has(key)) throw new Error(`${where}: unsupported schema keyword ${key}`);
  }
  const type = schema.type;
  if (typeof type !== "string" || !KNOWN_TYPES.has(type)) throw new Error(`${where}: unsupported type`);
  if (type === "object") {
    if (schema.additionalProperties !== false) throw new Error(`${where}: objects must be sealed`);
    const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const [name, sub] of Object.entries(props)) checkSchema(sub, `${where}.${name}`);
    for (const name of (schema.required ?? []) as string[]) {
      if (!(name in props)) throw new Error(`${where}: required ${name} is not a property`);
    }
  } else if (type === "string") {
    if (typeof schema.maxLength !== "number") throw new Error(`${where}: strings need maxLength`);
  } else if (type === "integer") {
    if (typeof schema.minimum !== "number" || typeof schema.maximum !== "number") {
      throw new Error(`${where}: integers need minimum and maximum`);
    }
  } else if (type === "array") {
    if (typeof schema.maxItems !== "number") throw new Error(`${where}: arrays need maxItems`);
    checkSchema(schema.items as JsonSchema, `${where}[]`);
  }
}

/** Length in Unicode code points, as JSON Schema counts `minLength` / `maxLength`. */
export function codePointLength(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" && !Number.isInteger(value)) return "a fractional number";
  return `a ${typeof value}`;
}

/** Returns the first problem found, naming the argument, or undefined when `value` is valid. */
export function findProblem(schema: JsonSchema, value: unknown, name: string | undefined): string | undefined {
  const label = name === undefined ? "the arguments" : `argument "${name}"`;
  switch (schema.type) {
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return `${label} must be an object, not ${describeType(value)}`;
      }
      const record = value as Record<string, unknown>;
      const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
      for (const key of Object.keys(record)) {
        if (!Object.prototype.hasOwnProperty.call(props, key)) {
          const allowed = Object.keys(props).map((k) => `"${k}"`).join(", ");
          const where = name === undefined ? "" : ` in ${label}`;
          return `unknown argument "${key}"${where} (allowed: ${allowed})`;
        }
      }
      for (const key of (schema.required ?? []) as string[]) {
        if (record[key] === undefined) {
          return `missing required argument "${name === undefined ? key : `${name}.${key}`}"`;
        }
      }
      for (const [key, sub] of Object.entries(props)) {
        if (record[key] === undefined) continue;
        const problem = findProblem(sub, record[key], name === undefined ? key : `${name}.${key}`);
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    case "string": {
      if (typeof value !== "string") return `${label} must be a string, not ${describeType(value)}`;
      const min = schema.minLength as number | undefined;
      const max = schema.maxLength as number;
      // Code points never exceed UTF-16 units and are at least half of them: count only when needed.
      const mustCount = value.length > max || (min !== undefined && value.length < 2 * min);
      const length = mustCount ? codePointLength(value) : value.length;
      if (min !== undefined && length < min) {
        return min === 1 ? `${label} must not be empty` : `${label} must be at least ${plural(min, "character")} long`;
      }
      if (length > max) return `${label} must be at most ${plural(max, "character")} long (got ${length})`;
      return undefined;
    }
    case "integer": {
      if (typeof value !== "number" || !Number.isInteger(value)) {
        return `${label} must be an integer, not ${describeType(value)}`;
      }
      const min = schema.minimum as number;
      const max = schema.maximum as number;
      if (value < min || value > max) return `${label} must be between ${min} and ${max} (got ${value})`;
      return undefined;
    }
    case "boolean":
      return typeof value === "boolean" ? undefined : `${label} must be true or false, not ${describeType(value)}`;
    case "array": {
      if (!Array.isArray(value)) return `${label} must be an array, not ${describeType(value)}`;
      const min = schema.minItems as number | undefined;
      const max = schema.maxItems as number;
      if (min !== undefined && value.length < min) return `${label} must have at least ${plural(min, "item")}`;
      if (value.length > max) return `${label} must have at most ${plural(max, "item")} (got ${value.length})`;
      for (let i = 0; i < value.length; i++) {
        const problem = findProblem(schema.items as JsonSchema, value[i], `${name ?? "arguments"}[${i}]`);
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    default:
      return `${label} has an unsupported schema`;
  }
}

/** Validates `args` against `schema`, throwing `ToolError("invalid_arguments")` naming the argument. */
export function validateArgs<T>(tool: string, schema: JsonSchema, args: unknown): T {
  const problem = findProblem(schema, args, undefined);
  if (problem !== undefined) throw new ToolError("invalid_arguments", `Invalid arguments for ${tool}: ${problem}.`);
  return args as T;
}
