// Static conformance (codegen/conformance/): small handwritten/ trees under
// test/fixtures/conformance/ that must fail, each naming the file and line of its violation, and
// the real tree, which must pass. The rules and the matrix are the repository's own.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { threadId } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { CODEGEN_CODES, type CodegenCode } from "../../../codegen/codes.js";
import { runConformance, scanHere, scanInWorker, scanTree, type Matrix } from "../../../codegen/conformance/index.js";
import { Problems } from "../../../codegen/errors.js";
import { AUTHORITY } from "../../../generated/authority.js";
import { REPO_ROOT } from "../../support/paths.js";
import { scratchRoot } from "../../support/scratch-root.js";

const MATRIX: Matrix = new Map(Object.entries(AUTHORITY));
const FIXTURES = "test/fixtures/conformance";

/** Every problem of one fixture tree, as printed: `path:line: TAU-C0xx message`. */
function problemsOf(fixture: string): Array<{ code: CodegenCode | undefined; message: string }> {
  const problems = new Problems();
  runConformance(REPO_ROOT, MATRIX, problems, join(REPO_ROOT, FIXTURES, fixture, "handwritten"), REPO_ROOT);
  return problems.list.map((p) => ({ code: p.code, message: p.message }));
}

/** The messages of one fixture that carry one of these codes (a tiny tree also lacks a consumer table, and so on). */
function coded(fixture: string, ...codes: CodegenCode[]): string[] {
  return problemsOf(fixture)
    .filter((p) => p.code !== undefined && codes.includes(p.code))
    .map((p) => p.message);
}

const disposers: Array<() => void> = [];
afterEach(() => {
  while (disposers.length > 0) disposers.pop()?.();
});

describe("static conformance of handwritten/", () => {
  it("[codegen.conformance.unknown-event] refuses a publication, selector or directed wait that names an event not in the registry, at its line", () => {
    expect(coded("unknown-event", "TAU-C010")).toEqual([
      `${FIXTURES}/unknown-event/handwritten/cli/app.ts:10: TAU-C010 client.emit names event ui.prompt_sumbit, which is not in the registry (generated/events.ts)`,
      `${FIXTURES}/unknown-event/handwritten/cli/app.ts:12: TAU-C010 client.subscribe names event harness.notise, which is not in the registry (generated/events.ts)`,
      `${FIXTURES}/unknown-event/handwritten/cli/app.ts:13: TAU-C010 client.directed names event ui.create_agent_reslt, which is not in the registry (generated/events.ts)`,
    ]);
  });

  it("[codegen.conformance.publisher-class-denied] refuses a publication by a folder whose publisher class may not publish the event", () => {
    expect(coded("publisher-denied", "TAU-C011", "TAU-C012")).toEqual([
      `${FIXTURES}/publisher-denied/handwritten/extensions/shell/main.ts:7: TAU-C011 ext.emit publishes tool.register from handwritten/extensions/shell, which publishes as ext:tool; records/SPEC-tool-routing.md lets only harness publish it`,
      `${FIXTURES}/publisher-denied/handwritten/store/journal.ts:5: TAU-C012 {name, data} publishes session.started, but handwritten/store has no publisher class (SPEC-event-publication, "Publishers in the code")`,
    ]);
  });

  it("[codegen.conformance.directed-sender-denied] refuses a direct message from a folder that may not send it, a committed fact sent as one, and a directed event published", () => {
    expect(coded("directed-denied", "TAU-C020", "TAU-C021", "TAU-C011", "TAU-C013")).toEqual([
      `${FIXTURES}/directed-denied/handwritten/cli/client.ts:5: TAU-C020 {message: "direct"} sends provider.request as a direct message from handwritten/cli, which may not send direct messages (SPEC-event-publication, "Publishers in the code")`,
      `${FIXTURES}/directed-denied/handwritten/harness/harness.ts:12: TAU-C021 this.sendDirected sends tool.request as a direct message, but records/SPEC-tool-routing.md makes it a restore event published by harness, ext:provider, ext:tool, ext:core, not a directed event of harness`,
      `${FIXTURES}/directed-denied/handwritten/harness/harness.ts:13: TAU-C013 {name, data} publishes ui.create_agent_result through the bus; it is a directed event (records/SPEC-ui-commands.md): send it with a direct message`,
    ]);
  });

  it("[codegen.conformance.successor-unlisted] refuses a consumer successor the authority matrix does not list, naming consumer and event", () => {
    expect(coded("successor-unlisted", "TAU-C040", "TAU-C041")).toEqual([
      `${FIXTURES}/successor-unlisted/handwritten/harness/consumers.ts:4: TAU-C040 consumer tools declares successor tool.register of tool.progress_reported, which the authority matrix does not list (records/SPEC-tool-routing.md lists: tool.progress)`,
    ]);
  });

  it("[codegen.conformance.successor-undeclared] refuses a matrix successor that no consumer of the event declares, naming event and successor", () => {
    expect(coded("successor-undeclared", "TAU-C040", "TAU-C041")).toEqual([
      `${FIXTURES}/successor-undeclared/handwritten/harness/consumers.ts:4: TAU-C041 the consumers of shell.command_request (shell) do not declare successor shell.command_started, which records/SPEC-shell-commands.md lists for it`,
    ]);
    // An event with successors and no consumer at all is named too.
    expect(coded("successor-undeclared", "TAU-C042")).toContain(
      "records/SPEC-tool-routing.md: TAU-C042 no consumer handles tool.progress_reported, whose authority row lists successor(s) tool.progress that the harness publishes",
    );
  });

  it("[codegen.conformance.successor-undeclared] matches onCommitted and consume sites with declarations both ways, reading a for-of over literals", () => {
    expect(coded("consumer-coverage", "TAU-C043", "TAU-C044")).toEqual([
      `${FIXTURES}/consumer-coverage/handwritten/harness/harness.ts:6: TAU-C043 bus.onCommitted handles tool.request, which no consumer declares (handwritten/harness/consumers.ts)`,
      `${FIXTURES}/consumer-coverage/handwritten/harness/harness.ts:6: TAU-C043 bus.onCommitted handles tool.result_reported, which no consumer declares (handwritten/harness/consumers.ts)`,
      `${FIXTURES}/consumer-coverage/handwritten/harness/harness.ts:9: TAU-C043 consumers.consume handles tool.progress_reported, which consumer shell does not declare (handwritten/harness/consumers.ts)`,
      `${FIXTURES}/consumer-coverage/handwritten/harness/consumers.ts:4: TAU-C044 consumer tools declares tool.progress_reported, which no onCommitted or consume site of it handles`,
    ]);
    // A tree without the table is refused.
    expect(coded("unknown-event", "TAU-C045")).toEqual([
      `${FIXTURES}/unknown-event/handwritten/harness/consumers.ts: TAU-C045 missing: it declares each post-commit consumer, the events it handles and the successors it may publish`,
    ]);
  });

  it("[codegen.conformance.import-crosses-rule] refuses imports across the dependency rule, out of the tree, and from a folder without a row", () => {
    expect(coded("import-crosses", "TAU-C030", "TAU-C031", "TAU-C032")).toEqual([
      `${FIXTURES}/import-crosses/handwritten/bus/bus.ts:1: TAU-C031 imports ../../outside.js, which is outside handwritten/ and generated/`,
      `${FIXTURES}/import-crosses/handwritten/bus/bus.ts:8: TAU-C030 bus imports cli (../cli/main.js); the dependency rule (records/ARCH-tau.md) lets bus import only protocol, startup, generated`,
      `${FIXTURES}/import-crosses/handwritten/cli/main.ts:2: TAU-C030 cli imports harness (../harness/harness.js); the dependency rule (records/ARCH-tau.md) lets cli import only protocol, sdk, transport, config, trace, sessions, swarm, startup, generated`,
      `${FIXTURES}/import-crosses/handwritten/plugins/index.ts:2: TAU-C032 handwritten/plugins has no row in the dependency rule (records/ARCH-tau.md)`,
      `${FIXTURES}/import-crosses/handwritten/store/journal.ts:2: TAU-C030 store imports bus (../bus/bus.js); the dependency rule (records/ARCH-tau.md) lets store import only protocol, startup, generated`,
    ]);
  });

  it("[codegen.conformance.real-tree-passes] the repository's handwritten/ passes every check, each named exception still needed", () => {
    const problems = new Problems();
    const { scan } = runConformance(REPO_ROOT, MATRIX, problems);
    expect(problems.list.map((p) => p.message)).toEqual([]);
    // The reads found what the harness really does (a sample), so a pass is not an empty scan.
    const where = (kind: string, event: string) => scan.sites.filter((s) => s.kind === kind && s.event === event).map((s) => s.where.split(":")[0]);
    expect(where("publish", "tool.register")).toEqual(["handwritten/harness/tools.ts"]);
    expect(where("direct", "provider.request")).toEqual(["handwritten/harness/harness.ts"]);
    expect(where("consume", "tool.cancelled_reported")).toEqual(["handwritten/harness/harness.ts"]);
    // The harness registers through its ConsumerRegistry, so each site names its consumer.
    const cancel = scan.sites.filter((s) => s.kind === "consume" && s.event === "agent.cancel_request").map((s) => s.consumer);
    expect(cancel).toEqual(["tools", "prompts", "agents"]);
    expect(where("direct", "tool.call")).toEqual(["handwritten/harness/tools.ts"]);
    expect(where("publish", "extension.exited")).toEqual(["handwritten/host/supervisor.ts"]);
    expect(scan.consumers?.length).toBeGreaterThan(20);
  });

  it("reports an exception that matches nothing any more", () => {
    // The fixture trees have none of the code the repository's exceptions excuse.
    const stale = coded("unknown-event", "TAU-C091");
    expect(stale.some((m) => /^records\/ARCH-tau\.md:\d+: TAU-C091 exception cli-prompt-history matches nothing any more: remove it$/.test(m))).toBe(true);
    expect(stale.some((m) => /^records\/SPEC-event-publication\.md:\d+: TAU-C091 exception round-start-in-line matches nothing/.test(m))).toBe(true);
  });

  it("[codegen.conformance.real-tree-passes] parses only files that may hold a site, and misses none by it", () => {
    const dir = join(REPO_ROOT, "handwritten");
    const filtered = scanTree(dir, REPO_ROOT, new Problems());
    const every = scanTree(dir, REPO_ROOT, new Problems(), { parseEveryFile: true });
    expect(filtered.sites.length).toBeGreaterThan(100);
    expect(filtered).toEqual(every);
  });

  it("scans on a worker thread, with the same result as on this one", async () => {
    const dir = join(REPO_ROOT, FIXTURES, "consumer-coverage", "handwritten");
    const here = scanHere(dir, REPO_ROOT);
    const there = await scanInWorker(dir, REPO_ROOT).result;
    expect(there.thread).not.toBe(threadId);
    expect(there.scan).toEqual(here.scan);
    expect(there.problems).toEqual(here.problems);
  });

  it("lists every code it reports in codegen/codes.ts", () => {
    const codes = new Set(Object.keys(CODEGEN_CODES));
    const seen = ["unknown-event", "publisher-denied", "directed-denied", "successor-unlisted", "successor-undeclared", "consumer-coverage", "import-crosses"].flatMap((f) =>
      problemsOf(f).map((p) => p.code),
    );
    for (const code of seen) expect(code !== undefined && codes.has(code)).toBe(true);
  });

  it("[codegen.conformance.real-tree-passes] npm run codegen:check fails on a violation in handwritten/, naming file and line", () => {
    const s = scratchRoot();
    disposers.push(s.dispose);
    const file = join(s.root, "handwritten", "harness", "tools.ts");
    const text = readFileSync(file, "utf8");
    const lines = text.split("\n");
    const at = lines.findIndex((l) => l.includes('this.port.publish("tool.progress"'));
    expect(at).toBeGreaterThan(0);
    writeFileSync(file, text.replace('this.port.publish("tool.progress"', 'this.port.publish("tool.progres"'));
    const run = spawnSync(process.execPath, ["--import", "tsx", join(REPO_ROOT, "codegen", "main.ts"), "--root", s.root, "--check"], { encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`codegen: handwritten/harness/tools.ts:${at + 1}: TAU-C010 this.port.publish names event tool.progres, which is not in the registry (generated/events.ts)`);
  });
});
