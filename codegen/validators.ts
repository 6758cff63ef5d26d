// JSON Schemas → one ajv standalone ESM module (no schema compiling at run time) and its typings.
import { Ajv2020 } from "ajv/dist/2020.js";
import standaloneModule from "ajv/dist/standalone/index.js";
import type { JsonSchema } from "./typespec.js";
import { typeNameOf } from "./typescript.js";

const standaloneCode = standaloneModule.default;

const VENDOR_KEYWORDS = ["x-tau-event", "x-tau-message", "x-tau-direction", "x-tau-record", "x-tau-config"];

/** Only root schemas get an exported validator; shared scalars and models are inlined by ajv. */
export function isRootSchema(schema: JsonSchema): boolean {
  return VENDOR_KEYWORDS.some((k) => k in schema) || schema.$id === "EventEnvelope.json";
}

export function emitValidators(schemas: Map<string, JsonSchema>, header: string): { js: string; dts: string } {
  const ajv = new Ajv2020({
    code: { source: true, esm: true, lines: true },
    allErrors: false,
    strict: true,
    // TypeSpec emits `unevaluatedProperties` for records together with declared properties.
    strictTypes: false,
  });
  ajv.addVocabulary(VENDOR_KEYWORDS);
  const ids = [...schemas.keys()].sort();
  for (const id of ids) ajv.addSchema(schemas.get(id) as object, id);
  const roots = ids.filter((id) => isRootSchema(schemas.get(id) as JsonSchema));
  const exportsMap: Record<string, string> = {};
  for (const id of roots) exportsMap[`validate${typeNameOf(id)}`] = id;
  const code = standaloneCode(ajv, exportsMap);
  const prelude =
    'import { createRequire } from "node:module";\nconst require = createRequire(import.meta.url);\n';
  const js = `${header}${prelude}${code}\n`;
  const dts = [
    header,
    'import type { ErrorObject } from "ajv";',
    "",
    "/** A generated validator: returns true or sets `errors`. */",
    "export interface GeneratedValidator {",
    "  (data: unknown): boolean;",
    "  errors?: ErrorObject[] | null;",
    "}",
    "",
    ...roots.map((id) => `export declare const validate${typeNameOf(id)}: GeneratedValidator;`),
    "",
  ].join("\n");
  return { js, dts };
}
