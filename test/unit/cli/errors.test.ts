// The CLI's errors (SPEC-cli-errors): one map from an error's kind to the exit status, used by every
// exit the CLI and the launcher script set, and one table of codes that the record and the docs site
// list exactly.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { renderErrors, readErrors } from "../../../codegen/docs/errors.js";
import { Errors } from "@oclif/core";
import { ERROR_DOCS, errorEntries } from "../../../handwritten/cli/error-docs.js";
import { EXIT_CODES, EXIT_OK, TAU_ERRORS, TauError, exitCodeOf, type TauErrorCode } from "../../../handwritten/cli/errors.js";
import { throughExitMap } from "../../../handwritten/cli/main.js";
import { NO_PROMPT } from "../../../handwritten/cli/run/index.js";
import { HEAD_END } from "../../../handwritten/cli/launcher-script.js";
import { REPO_ROOT, TAU_BIN } from "../../support/paths.js";
import { runTau } from "../../support/run-tau.js";

const codes = Object.keys(TAU_ERRORS) as TauErrorCode[];

function sources(dir: string, ext: RegExp): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path, ext));
    else if (ext.test(name)) out.push(path);
  }
  return out;
}

/** A literal exit status: `process.exitCode = 2`, `process.exit(1)`, `{ exit: 2 }`, `this.exit(1)`, `exitCode === 2`. */
const LITERAL_STATUS = /process\.exitCode\s*=\s*\d|process\.exit\(\s*\d|\bexit:\s*\d|this\.exit\(\s*\d|exitCode\s*===?\s*\d/;

/**
 * The literal statuses left outside the CLI, each with the kind whose status it must equal. The
 * daemon's entry (harness/daemon-start.ts, another part of tau) refuses its own command line and
 * configuration with literals; they must keep agreeing with the map. The test
 * extension exits 3 on request to play a crashing extension.
 */
const OUTSIDE_THE_CLI: ReadonlyArray<{ file: string; line: string; kind?: keyof typeof EXIT_CODES }> = [
  { file: "handwritten/extensions/test-dummy/main.ts", line: "setTimeout(() => process.exit(3), 10);" },
  { file: "handwritten/harness/daemon-start.ts", line: "process.exitCode = 2;", kind: "usage" },
  { file: "handwritten/harness/daemon-start.ts", line: "process.exitCode = 2;", kind: "config" },
];

describe("the CLI's exit statuses", () => {
  it("[cli.errors.one-exit-map] each kind keeps its exit status, and each code exits as its kind", () => {
    // The statuses scripts already rely on: changing one is a breaking change, not a refactoring.
    expect(EXIT_OK).toBe(0);
    expect(EXIT_CODES).toEqual({ usage: 2, config: 2, failed: 1, unavailable: 1, refused: 4, unreachable: 5, cut_short: 6, daemon_lost: 7, cancelled: 130, not_started: 3 });
    const group: Record<string, string[]> = {
      "01": ["usage"],
      "02": ["config"],
      "03": ["failed", "refused", "cut_short"],
      "04": ["unavailable", "not_started", "unreachable", "daemon_lost"],
      "05": ["cancelled"],
    };
    for (const code of codes) {
      expect(code).toMatch(/^TAU-E\d{4}$/);
      const kind = TAU_ERRORS[code];
      expect(group[code.slice(5, 7)], code).toContain(kind);
      const err = new TauError(code, "message");
      expect(err.kind).toBe(kind);
      expect(err.exitCode).toBe(EXIT_CODES[kind]);
      expect(exitCodeOf(code)).toBe(EXIT_CODES[kind]);
    }
  });

  it("[cli.errors.one-exit-map] no source of tau or its launcher sets an exit status but through the map", () => {
    const files = [...sources(join(REPO_ROOT, "handwritten"), /\.ts$/), ...sources(join(REPO_ROOT, "bin"), /\.c?js$/)];
    expect(files.length).toBeGreaterThan(100);
    const found: Array<{ file: string; line: string }> = [];
    for (const file of files) {
      for (const line of readFileSync(file, "utf8").split("\n")) if (LITERAL_STATUS.test(line)) found.push({ file: relative(REPO_ROOT, file), line: line.trim() });
    }
    expect(found).toEqual(OUTSIDE_THE_CLI.map(({ file, line }) => ({ file, line })));
    for (const { line, kind } of OUTSIDE_THE_CLI) if (kind) expect(Number(/\d+/.exec(line)?.[0]), line).toBe(EXIT_CODES[kind]);
    // The probe sees a literal status where there is one.
    expect(LITERAL_STATUS.test("    process.exitCode = 2;")).toBe(true);
    expect(LITERAL_STATUS.test('this.error(m, { exit: 1 });')).toBe(true);
    // The launcher script's own exits (its background child giving up) are the map's, as the build wrote them.
    const head = readFileSync(TAU_BIN, "utf8").split(`\n${HEAD_END}\n`)[0] as string;
    const shellExits = [...head.matchAll(/\bexit (\d+)/g)].map((m) => Number(m[1]));
    expect(shellExits.length).toBeGreaterThan(0);
    expect(new Set(shellExits)).toEqual(new Set([exitCodeOf("TAU-E0405")]));
    expect(head).toContain(`notBuiltExit: ${exitCodeOf("TAU-E0404")},`);
    expect(head).toContain('notBuiltCode: "TAU-E0404",');
  });

  it("[cli.errors.one-exit-map] the launcher of an unbuilt checkout and the command framework's own refusals exit as the map says", async () => {
    const checkout = mkdtempSync(join(tmpdir(), "tau-unbuilt-"));
    try {
      cpSync(join(REPO_ROOT, "bin"), join(checkout, "bin"), { recursive: true });
      cpSync(join(REPO_ROOT, "package.json"), join(checkout, "package.json"));
      for (const args of [["run", "-p", "hi"], ["spec", "events"]]) {
        const r = spawnSync(process.execPath, [join(checkout, "bin", "tau.cjs"), ...args], { encoding: "utf8", env: { ...process.env, TAU_HOME: checkout } });
        expect(r.status, args.join(" ")).toBe(exitCodeOf("TAU-E0404"));
        expect(r.stderr).toBe("tau: not built yet; run `npm ci` (or `npm run build`) in the tau checkout [TAU-E0404]\n");
      }
    } finally {
      rmSync(checkout, { recursive: true, force: true });
    }
    const home = mkdtempSync(join(tmpdir(), "tau-errors-"));
    try {
      const env = { TAU_HOME: home };
      for (const args of [["frobnicate"], ["provider", "list", "--bogus"]]) {
        const r = await runTau(args, { env });
        expect(r.code, args.join(" ")).toBe(exitCodeOf("TAU-E0100"));
        expect(r.stderr, args.join(" ")).toContain("Code: TAU-E0100");
      }
      // A command's own error keeps its code and its kind's status (here not the framework's 2).
      const missing = await runTau(["provider", "remove", "nonesuch"], { env });
      expect(missing.code).toBe(exitCodeOf("TAU-E0303"));
      expect(exitCodeOf("TAU-E0303")).not.toBe(exitCodeOf("TAU-E0100"));
      expect(missing.stderr).toContain("Code: TAU-E0303");
      expect(missing.stderr.replace(/\s+(›\s+)?/g, " ")).toContain("tau provider list shows the profiles");
      // The fast path prints the code at the end of the message's first line.
      const noPrompt = await runTau(["run"], { env });
      expect(noPrompt.code).toBe(exitCodeOf("TAU-E0102"));
      expect(noPrompt.stderr).toBe(`${NO_PROMPT} [TAU-E0102]\n`);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("[cli.errors.one-exit-map] what the command framework ends a command with leaves through the map", () => {
    const ours = throughExitMap(new TauError("TAU-E0303", "no profile"));
    expect(ours).toBeInstanceOf(Errors.CLIError);
    expect(ours).toMatchObject({ code: "TAU-E0303", oclif: { exit: exitCodeOf("TAU-E0303") } });
    const reported = new Errors.CLIError("no profile", { code: "TAU-E0303", exit: exitCodeOf("TAU-E0303") });
    expect(throughExitMap(reported)).toMatchObject({ code: "TAU-E0303", oclif: { exit: exitCodeOf("TAU-E0303") } });
    // The framework's own refusal, whatever status it chose, is TAU-E0100's.
    expect(throughExitMap(new Errors.CLIError("command x not found", { exit: 127 }))).toMatchObject({ code: "TAU-E0100", oclif: { exit: exitCodeOf("TAU-E0100") } });
    // An error nobody expected is a failure; this.exit(status) keeps the status the command took from the map.
    expect(throughExitMap(new Error("boom"))).toMatchObject({ oclif: { exit: EXIT_CODES.failed } });
    expect(throughExitMap(new Errors.ExitError(EXIT_CODES.unavailable))).toMatchObject({ oclif: { exit: EXIT_CODES.unavailable } });
  });

  it("[cli.errors.one-exit-map] a printed error ends its first line with its code", () => {
    expect(new TauError("TAU-E0102", "tau run: give a prompt").line()).toBe("tau run: give a prompt [TAU-E0102]");
    expect(new TauError("TAU-E0101", "tau run: bad flag\nSee: tau run --help").line()).toBe("tau run: bad flag [TAU-E0101]\nSee: tau run --help");
    expect(new TauError("TAU-E0403", "runtime folder").line("tau: ")).toBe("tau: runtime folder [TAU-E0403]");
  });
});

describe("the CLI's error codes", () => {
  it("[cli.errors.codes-documented] SPEC-cli-errors lists exactly the declared codes and exit statuses", () => {
    const record = readFileSync(join(REPO_ROOT, "records", "SPEC-cli-errors.md"), "utf8");
    const rows = [...record.matchAll(/^\| (TAU-E\d{4}) \| ([a-z_]+) \|/gm)].map((m) => [m[1], m[2]]);
    expect(rows).toEqual(codes.map((c) => [c, TAU_ERRORS[c]]));
    const statuses = [...record.matchAll(/^\| ([a-z_]+) \| (\d+) \|/gm)].map((m) => [m[1], Number(m[2])]);
    expect(Object.fromEntries(statuses)).toEqual(EXIT_CODES);
    expect(record).toMatch(/^\| \(success\) \| 0 \|/m);
  });

  it("[cli.errors.codes-documented] the docs site's errors page lists every code with its exit status, kind and meaning", () => {
    const input = { errors: errorEntries(), exitCodes: EXIT_CODES };
    expect(Object.keys(ERROR_DOCS)).toEqual(codes);
    const html = renderErrors(input, (md) => md, "SPEC");
    expect(readErrors(input).map((r) => r.code)).toEqual([...codes].sort());
    for (const code of codes) {
      const row = new RegExp(`<tr id="error-${code.toLowerCase()}"><td><code>${code}</code></td><td><code>(\\d+)</code></td><td><a [^>]*>([a-z_]+)</a></td>`).exec(html);
      expect(row, code).not.toBeNull();
      expect(Number(row?.[1])).toBe(exitCodeOf(code));
      expect(row?.[2]).toBe(TAU_ERRORS[code]);
      expect(html).toContain(ERROR_DOCS[code].meaning);
    }
    // A code whose kind has no status is refused, never listed without one.
    expect(() => readErrors({ errors: { "TAU-E0999": { kind: "nonesuch" } }, exitCodes: EXIT_CODES })).toThrow(/TAU-E0999/);
  });
});
