// fast-check arbitraries that produce values valid against tau's generated JSON Schemas, so
// property tests can round-trip every message and event kind.
import fc from "fast-check";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./paths.js";

type Schema = Record<string, unknown>;

const schemaDir = join(REPO_ROOT, "generated", "schemas");
export const SCHEMAS: ReadonlyMap<string, Schema> = new Map(
  readdirSync(schemaDir)
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(join(schemaDir, f), "utf8")) as Schema]),
);

const eventSchemas = [...SCHEMAS.values()].filter((s) => typeof s["x-tau-event"] === "string");

/** A valid `{name, data}` envelope for any event. */
export const anyEventEnvelope: fc.Arbitrary<{ name: string; data: unknown }> = fc.oneof(
  ...eventSchemas.map((s) => arbitraryFor(s, s).map((data) => ({ name: s["x-tau-event"] as string, data }))),
);

export function arbitraryForId(id: string): fc.Arbitrary<unknown> {
  const s = SCHEMAS.get(id);
  if (!s) throw new Error(`no schema ${id}`);
  return arbitraryFor(s, s);
}

function arbitraryFor(schema: Schema, root: Schema): fc.Arbitrary<unknown> {
  const ref = schema.$ref;
  if (typeof ref === "string") {
    if (ref === "EventEnvelope.json") return anyEventEnvelopeLazy();
    if (ref.startsWith("#/$defs/")) return arbitraryFor((root.$defs as Record<string, Schema>)[ref.slice(8)] as Schema, root);
    const target = SCHEMAS.get(ref) as Schema;
    return arbitraryFor(target, target);
  }
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as Schema[]).map((s) => arbitraryFor(s, root)));
  switch (schema.type) {
    case "string": {
      const maxLength = Math.min(typeof schema.maxLength === "number" ? schema.maxLength : 40, 40);
      if (typeof schema.pattern === "string") {
        return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= (schema.maxLength as number ?? Infinity));
      }
      const minLength = Math.min(typeof schema.minLength === "number" ? schema.minLength : 0, maxLength);
      // Graphemes may hold several code points (the unit JSON Schema counts): never fewer than minLength, and within maxLength.
      const most = typeof schema.maxLength === "number" ? schema.maxLength : Infinity;
      return fc.string({ minLength, maxLength, unit: "grapheme" }).filter((s) => [...s].length <= most);
    }
    case "integer": {
      const min = typeof schema.minimum === "number" ? schema.minimum : -1_000_000;
      const max = typeof schema.maximum === "number" ? Math.min(schema.maximum, Number.MAX_SAFE_INTEGER) : 1_000_000;
      return fc.integer({ min: Math.max(min, Number.MIN_SAFE_INTEGER), max });
    }
    case "number": {
      // The wire, like JSON, does not keep the sign of zero (cbor-x encodes -0 as the integer 0).
      const bounds = { ...(typeof schema.minimum === "number" ? { min: schema.minimum } : {}), ...(typeof schema.maximum === "number" ? { max: schema.maximum } : {}) };
      return fc.double({ noNaN: true, noDefaultInfinity: true, ...bounds }).map((n) => (n === 0 ? 0 : n));
    }
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return fc.array(arbitraryFor(schema.items as Schema, root), {
        minLength: typeof schema.minItems === "number" ? schema.minItems : 0,
        maxLength: 3,
      });
    case "object": {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set((schema.required ?? []) as string[]);
      const extra = schema.unevaluatedProperties as Schema | undefined;
      if (Object.keys(props).length === 0 && extra && !("not" in extra)) {
        const valueArb = Object.keys(extra).length === 0 ? fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)) : arbitraryFor(extra, root);
        return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== "__proto__"), valueArb, { maxKeys: 3 });
      }
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) model[k] = arbitraryFor(v, root);
      return fc.record(model, { requiredKeys: [...required] });
    }
  }
  throw new Error(`no arbitrary for ${JSON.stringify(schema).slice(0, 100)}`);
}

function anyEventEnvelopeLazy(): fc.Arbitrary<unknown> {
  return fc.constant(null).chain(() => anyEventEnvelope);
}
