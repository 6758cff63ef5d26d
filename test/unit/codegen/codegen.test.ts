import { describe, expect, it } from "vitest";
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { diffTrees, generate, writeTree } from "../../../codegen/main.js";
import { codegenProblems, useScratchRoots } from "../../support/scratch-root.js";
import { REPO_ROOT } from "../../support/paths.js";

const scratch = useScratchRoots();
const problemsOf = codegenProblems;

function runCodegen(root: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, ["--import", "tsx", join(REPO_ROOT, "codegen", "main.ts"), "--root", root, ...args], {
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
}

describe("codegen", () => {
  it("[codegen.check.detects-drift] passes on the committed tree and fails after a spec edit without regenerating", async () => {
    const root = scratch();
    const clean = runCodegen(root, ["--check"]);
    expect(clean.stderr).toBe("");
    expect(clean.status).toBe(0);

    const ui = join(root, "spec", "events", "ui.tsp");
    writeFileSync(ui, readFileSync(ui, "utf8").replace("  focused: boolean;", "  focused: boolean;\n  since?: Micros;"));
    const drift = runCodegen(root, ["--check"]);
    expect(drift.status).toBe(1);
    expect(drift.stderr).toContain("generated/schemas/UiFocus.json: differs from its sources");
    expect(drift.stderr).toContain("generated/types.ts: differs from its sources");
  });

  it("[codegen.check.detects-drift] fails after a record edit and on a hand-edited or stale generated file", async () => {
    const root = scratch();
    appendFileSync(join(root, "records", "SPEC-ui-commands.md"), "\nAn added sentence.\n");
    const r1 = runCodegen(root, ["--check"]);
    expect(r1.status).toBe(1);
    expect(r1.stderr).toContain("generated/records.ts: differs from its sources");

    const root2 = scratch();
    appendFileSync(join(root2, "generated", "authority.ts"), "// hand edit\n");
    writeFileSync(join(root2, "generated", "extra.ts"), "export {};\n");
    const r2 = runCodegen(root2, ["--check"]);
    expect(r2.status).toBe(1);
    expect(r2.stderr).toContain("generated/authority.ts: differs from its sources");
    expect(r2.stderr).toContain("generated/extra.ts: stale file with no source");
  });

  it("[codegen.deterministic.byte-identical] two runs in different folders and time zones write identical trees", () => {
    const a = scratch();
    const b = scratch();
    expect(runCodegen(a, [], { TZ: "UTC" }).status).toBe(0);
    expect(runCodegen(b, [], { TZ: "Pacific/Chatham", LANG: "tr_TR.UTF-8" }).status).toBe(0);
    expect(diffTrees(join(a, "generated"), join(b, "generated"))).toEqual([]);
    expect(diffTrees(join(REPO_ROOT, "generated"), join(a, "generated"))).toEqual([]);
  });

  it("[codegen.authority.event-without-row-refused] names an event added to spec/ without an authority row", async () => {
    const root = scratch();
    appendFileSync(
      join(root, "spec", "events", "ui.tsp"),
      '\n@extension("x-tau-event", "ui.bell_request")\nmodel UiBellRequest {\n  agent_id: Id;\n}\n',
    );
    const problems = await problemsOf(root);
    expect(problems).toEqual([
      "spec/ (model UiBellRequest): event ui.bell_request has no authority row in any SPEC (deny by default: add one)",
    ]);
    const cli = runCodegen(root, []);
    expect(cli.status).toBe(1);
    expect(cli.stderr).toContain("ui.bell_request");
  });

  it("[codegen.authority.event-without-row-refused] refuses two rows for one event and rows for unknown events", async () => {
    const root = scratch();
    const file = join(root, "records", "SPEC-ui-commands.md");
    writeFileSync(
      file,
      readFileSync(file, "utf8").replace(
        "| ui.focus | ui:attached | transient | no | — |",
        "| ui.focus | ui:attached | transient | no | — |\n| ui.focus | harness | transient | no | — |\n| ui.ghost | harness | transient | no | — |",
      ),
    );
    const problems = await problemsOf(root);
    expect(problems).toContain("records/SPEC-ui-commands.md, records/SPEC-ui-commands.md: event ui.focus has 2 authority rows; exactly one is required");
    expect(problems).toContain("records/SPEC-ui-commands.md: authority row ui.ghost names an unknown event");
  });

  it("[codegen.authority.unknown-publisher-refused] names the record and row of an unknown publisher class", async () => {
    const root = scratch();
    const file = join(root, "records", "SPEC-ui-commands.md");
    writeFileSync(file, readFileSync(file, "utf8").replace("| ui.focus | ui:attached |", "| ui.focus | ui:everyone |"));
    const problems = await problemsOf(root);
    expect(problems).toEqual(['records/SPEC-ui-commands.md: authority row ui.focus: unknown publisher class "ui:everyone"']);
  });

  it("[codegen.records.missing-link-refused] names the record and the missing link", async () => {
    const root = scratch();
    const file = join(root, "records", "SPEC-ui-commands.md");
    writeFileSync(file, readFileSync(file, "utf8").replace("links: [", "links: [SPEC-nowhere, "));
    appendFileSync(file, "\nSee [GATE-absent](GATE-absent.md).\n");
    const problems = await problemsOf(root);
    expect(problems).toContain("records/SPEC-ui-commands.md: links to missing record SPEC-nowhere");
    expect(problems).toContain("records/SPEC-ui-commands.md: links to missing record GATE-absent");
  });

  it("refuses an enforced gate whose required test does not exist, and stubs a proposed one", async () => {
    // Built at run time so the test scanner does not mistake this file for the test it describes.
    const id = ["example", "thing", "never-written"].join(".");
    const root = scratch();
    writeFileSync(
      join(root, "records", "GATE-example-thing.md"),
      "---\nid: GATE-example-thing\nkind: GATE\nstatus: enforced\nlinks: []\n---\n\n# X\n\n## Gate\n\nA rule.\n\n## Justification\n\nWhy.\n\n## Required tests\n\n- " + id + "\n",
    );
    expect(await problemsOf(root)).toEqual([
      `records/GATE-example-thing.md: enforced gate GATE-example-thing: required test id ${id} has no test (a test titled "[${id}] …")`,
    ]);
    const file = join(root, "records", "GATE-example-thing.md");
    writeFileSync(file, readFileSync(file, "utf8").replace("status: enforced", "status: proposed"));
    const files = await generate(root);
    expect(files.get("tests/gates.todo.test.ts")).toContain(`it.todo("[${id}] required by GATE-example-thing")`);
  });

  it("[codegen.settings.every-extension] refuses a first-party extension without declared settings, and settings of no extension", async () => {
    const root = scratch();
    mkdirSync(join(root, "handwritten", "extensions", "bell"));
    writeFileSync(join(root, "handwritten", "extensions", "bell", "main.ts"), "export async function main(): Promise<void> {}\n");
    appendFileSync(join(root, "spec", "extension-settings.tsp"), '\n@extension("x-tau-settings", "gong")\nmodel GongSettings {\n  loud?: boolean;\n}\n');
    expect((await problemsOf(root)).sort()).toEqual([
      'handwritten/extensions/bell/: extension bell has no settings in spec/ (a model with x-tau-settings "bell")',
      "spec/ (model GongSettings): x-tau-settings names gong, which is not a first-party extension (handwritten/extensions/gong/main.ts)",
    ]);
  });

  it("writes only changed files and removes stale ones", async () => {
    const root = scratch();
    const files = await generate(root);
    expect(writeTree(join(root, "generated"), files)).toEqual([]);
    writeFileSync(join(root, "generated", "stale.ts"), "");
    expect(writeTree(join(root, "generated"), files)).toEqual(["stale.ts"]);
  });
});
