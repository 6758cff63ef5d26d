import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runTau } from "../../support/run-tau.js";
import { REPO_ROOT } from "../../support/paths.js";
import { AUTHORITY, EVENT_NAMES } from "../../../generated/index.js";

const version = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;

describe("tau CLI entry", () => {
  it("answers --version from the fast path", async () => {
    const r = await runTau(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`tau/${version} ${process.platform}-${process.arch} node-${process.version}\n`);
  });

  it("prints help listing the spec topic", async () => {
    const r = await runTau(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("USAGE");
    expect(r.stdout).toContain("spec");
  });

  it("tau spec events --json lists every event with its publishers and persistence", async () => {
    const r = await runTau(["spec", "events", "--json"]);
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<{ event: string; publishers: string[]; persistence: string; protected: boolean }>;
    expect(rows.map((x) => x.event)).toEqual([...EVENT_NAMES]);
    for (const row of rows) {
      const a = AUTHORITY[row.event as keyof typeof AUTHORITY];
      expect(row.publishers).toEqual(a.publishers);
      expect(row.persistence).toBe(a.persistence);
      expect(row.protected).toBe(a.protected);
    }
  });

  it("tau spec events prints an aligned table", async () => {
    const r = await runTau(["spec", "events"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^EVENT\s+PUBLISHERS\s+PERSISTENCE\s+PROTECTED\s+SUCCESSORS$/);
    expect(lines).toHaveLength(EVENT_NAMES.length + 1);
    expect(lines.find((l) => l.startsWith("tool.result_reported "))).toMatch(
      /^tool\.result_reported\s+ext:tool,ext:core\s+transient\s+no\s+provider\.tool_result,provider\.tool_error,tool\.result,tool\.result_display$/,
    );
  });

  it("fails with a clear message on an unknown command", async () => {
    const r = await runTau(["frobnicate"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("frobnicate");
  });
});
