// generated/validators.js: one lazy validator per root schema, each loading its own
// generated/validators/<Name>.cjs on first use, and answering exactly as ajv does.
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as V from "../../../generated/validators.js";
import type { GeneratedValidator } from "../../../generated/validators.js";
import { REPO_ROOT } from "../../support/paths.js";
import { SCHEMAS, arbitraryForId } from "../../support/schema-arbitrary.js";

const VALIDATORS = join(REPO_ROOT, "generated", "validators.js");
const FILES = join(REPO_ROOT, "generated", "validators");

/** Runs `body` (ES module code, with `V` the validators module) in a fresh Node and returns what it prints as JSON. */
function fresh(body: string): unknown {
  const code = `import { createRequire } from "node:module";
const V = await import(${JSON.stringify(pathToFileURL(VALIDATORS).href)});
const loaded = () => Object.keys(createRequire(${JSON.stringify(pathToFileURL(VALIDATORS).href)}).cache)
  .filter((f) => f.startsWith(${JSON.stringify(FILES)}))
  .map((f) => f.slice(${FILES.length + 1}));
${body}`;
  return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8" }));
}

/** The reference: ajv compiling the same schemas at run time, with codegen's options. */
function referenceAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: false, strict: true, strictTypes: false });
  ajv.addVocabulary(["x-tau-event", "x-tau-message", "x-tau-direction", "x-tau-record", "x-tau-config", "x-tau-current", "x-tau-format", "x-tau-request", "x-tau-settings"]);
  for (const [id, schema] of SCHEMAS) ajv.addSchema(schema, id);
  return ajv;
}

const exported = Object.keys(V)
  .filter((k) => k.startsWith("validate"))
  .sort();

describe("lazy generated validators", () => {
  it("there is one file per exported validator, and each export is its schema's", () => {
    expect(readdirSync(FILES).sort()).toEqual(exported.map((k) => `${k.slice("validate".length)}.cjs`));
    expect(exported.length).toBeGreaterThan(50);
  });

  it("load nothing at import, and only the file of each validator called, once", () => {
    const out = fresh(`const seen = [loaded()];
V.validateHelloMessage({ message: "hello", payload: { revision: { major: 1, minor: 0 }, role: "ui" } });
seen.push(loaded());
V.validateHelloMessage({ message: "hello" });
V.validateHelloMessage(null);
seen.push(loaded());
V.validateEventEnvelope({ name: "ui.focus", data: {} });
seen.push(loaded().sort());
console.log(JSON.stringify(seen));`);
    expect(out).toEqual([[], ["HelloMessage.cjs"], ["HelloMessage.cjs"], ["EventEnvelope.cjs", "HelloMessage.cjs"]]);
  });

  it("answer exactly as ajv does, result and errors, for valid and invalid samples of every root schema", () => {
    const ajv = referenceAjv();
    const V2 = V as unknown as Record<string, GeneratedValidator>;
    let valid = 0;
    let invalid = 0;
    for (const name of exported) {
      const id = `${name.slice("validate".length)}.json`;
      const reference = ajv.getSchema(id);
      if (!reference) throw new Error(`no schema ${id}`);
      const lazy = V2[name] as GeneratedValidator;
      const samples: unknown[] = [null, 0, "x", [], {}, { message: "hello", payload: {} }, { name: "ui.focus", data: {} }];
      for (const good of fc.sample(arbitraryForId(id), { numRuns: 12, seed: 7 })) {
        samples.push(good);
        if (good === null || typeof good !== "object" || Array.isArray(good)) continue;
        const keys = Object.keys(good);
        samples.push({ ...good, unexpected_property: 1 });
        for (const k of keys) {
          const { [k]: _dropped, ...rest } = good as Record<string, unknown>;
          samples.push(rest, { ...good, [k]: 12.5 }, { ...good, [k]: "\ud800".repeat(3) }, { ...good, [k]: { nested: [] } });
        }
      }
      for (const sample of samples) {
        const want = reference(sample);
        const wantErrors = structuredClone(reference.errors);
        const got = lazy(sample);
        expect({ name, sample, ok: got, errors: lazy.errors }).toEqual({ name, sample, ok: want, errors: wantErrors });
        if (want) valid++;
        else invalid++;
      }
    }
    // Both kinds are well represented.
    expect(valid).toBeGreaterThan(exported.length * 5);
    expect(invalid).toBeGreaterThan(exported.length * 5);
  });
});
