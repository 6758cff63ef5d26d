// JSON Schemas → one ajv standalone CommonJS file per root schema (no schema compiling at run time),
// plus validators.js, which exports a lazy validator per root schema, and its typings.
//
// A process validates only a handful of message and event kinds, so it should not load (read,
// compile, evaluate) the code for all of them: validators.js is a few lines per schema, and each
// validator requires its own validators/<Name>.cjs on its first call. Each file is compiled by a
// fresh ajv instance, so it holds only what its schema reaches and its identifiers do not change
// when an unrelated schema is added.
import { Ajv2020 } from "ajv/dist/2020.js";
import standaloneModule from "ajv/dist/standalone/index.js";
import type { JsonSchema } from "./typespec.js";
import { typeNameOf } from "./typescript.js";

const standaloneCode = standaloneModule.default;

const VENDOR_KEYWORDS = ["x-tau-event", "x-tau-message", "x-tau-direction", "x-tau-record", "x-tau-config", "x-tau-format", "x-tau-settings"];

/** The folder of the per-schema files, relative to validators.js; build.ts rewrites this exact line for dist/. */
const VALIDATORS_DIR_LINE = 'const DIR = "./validators/";';
/** The loader with a code cache, relative to validators.js: none from source; build.ts rewrites this exact line for dist/. */
const VALIDATORS_LOADER_LINE = "const LOADER = undefined;";

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

/** Swaps ajv's ucs2length for codePointLength in one file's code; the prelude only where it is used. */
function fastCodePointLength(code: string, id: string): { prelude: string; code: string } {
  const uses = code.split(AJV_UCS2LENGTH).length - 1;
  if (uses > 1) throw new Error(`expected ajv's ucs2length to be referenced at most once in the validator of ${id}, found ${uses}`);
  return uses === 0 ? { prelude: "", code } : { prelude: CODE_POINT_LENGTH, code: code.replace(AJV_UCS2LENGTH, "codePointLength") };
}

/** Only root schemas get an exported validator; shared scalars and models are inlined by ajv. */
export function isRootSchema(schema: JsonSchema): boolean {
  return VENDOR_KEYWORDS.some((k) => k in schema) || schema.$id === "EventEnvelope.json";
}

function newAjv(validateSchema: boolean): Ajv2020 {
  const ajv = new Ajv2020({
    code: { source: true, esm: false, lines: true },
    allErrors: false,
    strict: true,
    // TypeSpec emits `unevaluatedProperties` for records together with declared properties.
    strictTypes: false,
    validateSchema,
  });
  // `x-tau-current` annotates a shared model (Revision) with this build's value, `x-tau-request` a
  // message or event with what answers it; neither makes a schema a root.
  ajv.addVocabulary([...VENDOR_KEYWORDS, "x-tau-current", "x-tau-request"]);
  return ajv;
}

const USE_STRICT = '"use strict";';

export interface EmittedValidators {
  /** validators.js: the lazy validators. */
  js: string;
  /** validators.d.ts */
  dts: string;
  /** validators/<Name>.cjs by name, sorted: one standalone validator each. */
  files: Map<string, string>;
}

export function emitValidators(schemas: Map<string, JsonSchema>, header: string): EmittedValidators {
  const ids = [...schemas.keys()].sort();
  // Every schema is checked against the meta-schema once; the per-root instances skip that.
  const checked = newAjv(true);
  for (const id of ids) checked.addSchema(schemas.get(id) as object, id);
  const roots = ids.filter((id) => isRootSchema(schemas.get(id) as JsonSchema));

  const files = new Map<string, string>();
  for (const id of roots) {
    const name = typeNameOf(id);
    const ajv = newAjv(false);
    for (const other of ids) ajv.addSchema(schemas.get(other) as object, other);
    const standalone = standaloneCode(ajv, { [`validate${name}`]: id });
    if (!standalone.startsWith(USE_STRICT)) throw new Error(`unexpected ajv standalone code for ${id}`);
    const { prelude, code } = fastCodePointLength(standalone.slice(USE_STRICT.length).replace(/^\n/, ""), id);
    files.set(name, `${header}${USE_STRICT}\n${prelude}${code}\n`);
  }

  const names = roots.map(typeNameOf);
  const js = [
    header.trimEnd(),
    "// Each validator loads validators/<Name>.cjs (ajv standalone code for that one schema) on its",
    "// first call and forwards every call to it, so a process loads only the schemas it validates.",
    'import { createRequire } from "node:module";',
    'import { fileURLToPath } from "node:url";',
    "",
    VALIDATORS_DIR_LINE,
    VALIDATORS_LOADER_LINE,
    "let requireFile;",
    "",
    "/**",
    " * A validator that loads its schema's file on first use; `errors` is the loaded one's after each call.",
    " * A file that cannot be loaded (no descriptor left, say) fails that one call closed, with an error",
    " * naming the schema and the cause but no path, and the next call tries again: never a throw.",
    " */",
    "function lazy(name) {",
    "  let loaded;",
    "  /** Loads the schema's file now, if it is not yet; the error's code when it cannot be. */",
    "  function load() {",
    "    if (loaded !== undefined) return undefined;",
    "    try {",
    "      requireFile ??= createRequire(import.meta.url);",
    "      const file = fileURLToPath(new URL(`${DIR}${name}.cjs`, import.meta.url));",
    "      // Built, through bin/bundle-loader.cjs: compiled from a V8 code cache made once.",
    "      loaded = (LOADER === undefined ? requireFile(file) : requireFile(fileURLToPath(new URL(LOADER, import.meta.url))).loadBundle(file).exports)[`validate${name}`];",
    "      return undefined;",
    "    } catch (error) {",
    "      return (error && typeof error.code === \"string\" && error.code) || \"an error\";",
    "    }",
    "  }",
    "  function validate(data) {",
    "    const cause = load();",
    "    if (cause !== undefined) {",
    "      validate.errors = [{ instancePath: \"\", schemaPath: \"#\", keyword: \"unavailable\", params: {}, message: `the ${name} validator could not be loaded (${cause}); nothing was accepted` }];",
    "      return false;",
    "    }",
    "    const valid = loaded(data);",
    "    validate.errors = loaded.errors;",
    "    return valid;",
    "  }",
    "  validate.load = load;",
    "  return validate;",
    "}",
    "",
    ...names.map((n) => `export const validate${n} = /* @__PURE__ */ lazy(${JSON.stringify(n)});`),
    "",
    "/**",
    " * Loads every validator's file now, a few per turn of the event loop, for a long-lived process",
    " * that must not need a descriptor to validate later (when it may have none left). Resolves with",
    " * the number that could not be loaded (they load on first use, as ever).",
    " */",
    "export async function preloadValidators(perStep = 8) {",
    `  const all = [${names.map((n) => `validate${n}`).join(", ")}];`,
    "  let failed = 0;",
    "  for (let i = 0; i < all.length; i += perStep) {",
    "    for (const v of all.slice(i, i + perStep)) if (v.load() !== undefined) failed++;",
    "    await new Promise((resolve) => setImmediate(resolve));",
    "  }",
    "  return failed;",
    "}",
    "",
  ].join("\n");
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
    ...names.map((n) => `export declare const validate${n}: GeneratedValidator;`),
    "",
    "/** Loads every validator's file now, a few per turn of the event loop; resolves with how many could not be loaded. */",
    "export declare function preloadValidators(perStep?: number): Promise<number>;",
    "",
  ].join("\n");
  return { js, dts, files };
}
