// JSON Schemas → one ajv standalone ESM module (no schema compiling at run time) and its typings.
import { Ajv2020 } from "ajv/dist/2020.js";
import standaloneModule from "ajv/dist/standalone/index.js";
import type { JsonSchema } from "./typespec.js";
import { typeNameOf } from "./typescript.js";

const standaloneCode = standaloneModule.default;

const VENDOR_KEYWORDS = ["x-tau-event", "x-tau-message", "x-tau-direction", "x-tau-record", "x-tau-config"];

// ajv counts code points for minLength/maxLength with a charCodeAt loop over the whole string
// (ucs2length), which costs microseconds per kilobyte of every bounded body text on the wire. A
// string without any surrogate code unit has exactly as many code points as UTF-16 units, and a
// native regex finds that out far faster; only strings with surrogates take ajv's loop.
const AJV_UCS2LENGTH = 'require("ajv/dist/runtime/ucs2length").default';
const CODE_POINT_LENGTH = [
  "const ajvUcs2length = require(\"ajv/dist/runtime/ucs2length\").default;",
  "const SURROGATE = /[\\uD800-\\uDFFF]/;",
  "/** Code points in `s`, as ajv's ucs2length counts them; the loop only when `s` has surrogates. */",
  "function codePointLength(s) {",
  "  return SURROGATE.test(s) ? ajvUcs2length(s) : s.length;",
  "}",
  "",
].join("\n");

function fastCodePointLength(code: string): string {
  const uses = code.split(AJV_UCS2LENGTH).length - 1;
  if (uses !== 1) throw new Error(`expected ajv's ucs2length to be referenced once in the validators, found ${uses}`);
  return code.replace(AJV_UCS2LENGTH, "codePointLength");
}

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
  const code = fastCodePointLength(standaloneCode(ajv, exportsMap));
  const prelude =
    'import { createRequire } from "node:module";\nconst require = createRequire(import.meta.url);\n' + CODE_POINT_LENGTH;
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
