// codegen: spec/ + records/ → generated/. `--check` regenerates into a temporary folder and fails
// on any drift or broken cross-reference; every message names the file and the row or id.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { AggregateCodegenError, CodegenError, Problems } from "./errors.js";
import { compileSpec } from "./typespec.js";
import { loadRecords } from "./records.js";
import { buildTables } from "./tables.js";
import { emitTypes } from "./typescript.js";
import { emitValidators } from "./validators.js";
import { SdkEmitter } from "./polyglot.js";
import {
  HEADER,
  emitAuthority,
  emitConformanceTest,
  emitEvents,
  emitGates,
  emitIndex,
  emitMessages,
  emitPersistence,
  emitRecordIndex,
  emitTodoTests,
} from "./emit.js";
import { scanTests } from "./tests-scan.js";
import { buildRequests, emitRequests } from "./requests.js";
import { buildSettings, emitSettings } from "./settings.js";
import { emitConsumers, matrixOf, runConformance, scanInWorker } from "./conformance/index.js";

export async function generate(root: string): Promise<Map<string, string>> {
  // The other-language contracts are written on a second thread, alongside the rest of the run.
  const sdk = SdkEmitter.start();
  try {
    return await generateWith(root, sdk);
  } finally {
    sdk.close();
  }
}

async function generateWith(root: string, sdk: SdkEmitter): Promise<Map<string, string>> {
  const problems = new Problems();
  // handwritten/ is parsed on another thread while the spec compiles (codegen/conformance/).
  const handwritten = join(root, "handwritten");
  const scanning = scanInWorker(handwritten, root);
  const { schemas, records, tables, requests, settings } = await contractSources(root, problems).catch((err: unknown) => {
    scanning.cancel();
    throw err;
  });
  const sdkFiles = sdk.emit(schemas, tables);
  // Settled below; until then a failure of this run elsewhere must not leave it unhandled.
  sdkFiles.catch(() => {});
  // handwritten/ against the registry, the matrix and the record tables.
  const matrix = matrixOf(tables);
  const conformance = runConformance(root, matrix, problems, handwritten, root, await scanning.result);

  const files = new Map<string, string>();
  for (const [id, schema] of schemas) files.set(`schemas/${id}`, `${JSON.stringify(schema, null, 2)}\n`);
  files.set("types.ts", `${HEADER}\n${emitTypes(schemas)}`);
  const validators = emitValidators(schemas, HEADER);
  files.set("validators.js", validators.js);
  files.set("validators.d.ts", validators.dts);
  for (const [name, code] of validators.files) files.set(`validators/${name}.cjs`, code);
  files.set("events.ts", emitEvents(tables));
  files.set("messages.ts", emitMessages(tables));
  files.set("requests.ts", emitRequests(HEADER, requests));
  files.set("settings.ts", emitSettings(HEADER, settings));
  files.set("authority.ts", emitAuthority(tables));
  files.set("persistence.ts", emitPersistence(tables));
  files.set("gates.ts", emitGates(tables));
  files.set("records.ts", emitRecordIndex(tables));
  files.set("consumers.ts", emitConsumers(conformance.scan.consumers ?? [], matrix));
  files.set("index.ts", emitIndex());
  const matrixTest = emitConformanceTest(tables);
  files.set("tests/authority.conformance.test.ts", matrixTest);

  const scan = scanTests(root, ["test", "examples"], [matrixTest]);
  const pending: Array<{ gate: string; id: string }> = [];
  for (const gate of records.filter((r) => r.kind === "GATE")) {
    for (const id of gate.requiredTests) {
      if (scan.implemented.has(id)) continue;
      if (gate.status === "enforced") {
        const why = scan.todo.has(id) ? "is still an it.todo" : "has no test";
        problems.add(gate.file, `enforced gate ${gate.id}: required test id ${id} ${why} (a test titled "[${id}] …")`);
      } else {
        pending.push({ gate: gate.id, id });
      }
    }
  }
  problems.throwIfAny();
  if (pending.length > 0) files.set("tests/gates.todo.test.ts", emitTodoTests(pending));
  for (const [path, code] of await sdkFiles) files.set(path, code);
  return new Map([...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The spec's schemas, the records and the tables built from both; fails on any problem in them. */
async function contractSources(root: string, problems: Problems) {
  const schemas = await compileSpec(root);
  const records = loadRecords(root, problems);
  const tables = buildTables(schemas, records, problems);
  const requests = buildRequests(schemas, tables, problems);
  const settings = buildSettings(root, schemas, problems);
  problems.throwIfAny();
  return { schemas, records, tables, requests, settings };
}

function listTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      // The byte-code cache python3 writes beside a module it imports (generated/sdk/python/) is
      // not part of the tree.
      if (name === "__pycache__") continue;
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p, "utf8"));
    }
  };
  walk(dir);
  return out;
}

/** Writes changed files only and deletes stale ones, so an unchanged run touches nothing. */
export function writeTree(dir: string, files: Map<string, string>): string[] {
  const existing = listTree(dir);
  const changed: string[] = [];
  for (const [rel, content] of files) {
    if (existing.get(rel) === content) continue;
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), content);
    changed.push(rel);
  }
  for (const rel of existing.keys()) {
    if (!files.has(rel)) {
      unlinkSync(join(dir, rel));
      changed.push(rel);
    }
  }
  return changed.sort();
}

/** Differences between two trees, as `generated/<path>: reason` lines. */
export function diffTrees(expectedDir: string, actualDir: string): string[] {
  const expected = listTree(expectedDir);
  const actual = listTree(actualDir);
  const drift: string[] = [];
  for (const [rel, content] of expected) {
    const got = actual.get(rel);
    if (got === undefined) drift.push(`generated/${rel}: missing (run npm run codegen)`);
    else if (got !== content) drift.push(`generated/${rel}: differs from its sources (run npm run codegen; never edit generated/ by hand)`);
  }
  for (const rel of actual.keys()) {
    if (!expected.has(rel)) drift.push(`generated/${rel}: stale file with no source (run npm run codegen)`);
  }
  return drift.sort();
}

async function main(argv: string[]): Promise<number> {
  const check = argv.includes("--check");
  const rootFlag = argv.indexOf("--root");
  const root = rootFlag >= 0 && argv[rootFlag + 1] ? argv[rootFlag + 1]! : join(dirname(fileURLToPath(import.meta.url)), "..");
  let files: Map<string, string>;
  try {
    files = await generate(root);
  } catch (err) {
    if (err instanceof AggregateCodegenError) {
      for (const p of err.problems) console.error(`codegen: ${p.message}`);
      return 1;
    }
    if (err instanceof CodegenError) {
      console.error(`codegen: ${err.message}`);
      return 1;
    }
    throw err;
  }
  const generatedDir = join(root, "generated");
  if (!check) {
    const changed = writeTree(generatedDir, files);
    console.log(changed.length === 0 ? "codegen: generated/ is up to date" : `codegen: wrote ${changed.length} file(s)`);
    return 0;
  }
  const tmp = mkdtempSync(join(tmpdir(), "tau-codegen-"));
  try {
    writeTree(tmp, files);
    const drift = diffTrees(tmp, generatedDir);
    if (drift.length > 0) {
      for (const d of drift) console.error(`codegen:check: ${d}`);
      return 1;
    }
    console.log(`codegen:check: generated/ matches spec/ and records/ (${files.size} files)`);
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
