// `npm run soak`: the crash-consistency soak (records/GATE-journal-integrity.md, "The SIGKILL soak").
// Each round drives a real tau session — the real `tau` binary, its provider, shell and handoff
// extensions, the loopback scripted model — SIGKILLs the daemon or an extension at a drawn point,
// resumes, and checks that nothing acknowledged was lost, nothing ran or was asked twice, every
// call got an outcome and nothing of the round is left running. Not part of `npm test`.
//
//   npm run soak -- [--rounds N] [--seed S] [--budget-minutes M] [--round N] [--from N]
//                   [--phases a,b] [--targets a,b] [--no-handoff] [--no-sandbox] [--no-keep] [--no-build] [--verbose] [--dump DIR]
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildAll } from "../../build.js";
import { FakeOpenAI } from "../../test/support/fake-openai.js";
import { INVARIANTS } from "./checks.js";
import { SoakModel } from "./model.js";
import { PHASES, TARGETS, describePlan, type Phase, type Target } from "./plan.js";
import { killQuietly, processesOf } from "./procs.js";
import { runRound, type RoundResult, type SoakOptions } from "./round.js";
import { printSummary } from "./summary.js";

interface Args {
  rounds: number;
  seed: number;
  budgetMs: number;
  from: number;
  only?: number;
  build: boolean;
  dump?: string;
  o: SoakOptions;
}

const USAGE = "usage: npm run soak -- [--rounds N] [--seed S] [--budget-minutes M] [--round N] [--from N] [--phases a,b] [--targets a,b] [--no-handoff] [--no-sandbox] [--no-keep] [--no-build] [--verbose] [--dump DIR]";

function listOf<T extends string>(value: string, all: readonly T[], what: string): T[] {
  const items = value.split(",").filter(Boolean);
  for (const i of items) if (!all.includes(i as T)) throw new Error(`unknown ${what} ${i} (one of ${all.join(", ")})`);
  return items as T[];
}

function parseArgs(argv: string[]): Args {
  const a: Args = { rounds: 1000, seed: Math.floor(Math.random() * 2 ** 31), budgetMs: Infinity, from: 1, build: true, o: { handoff: true, sandbox: true, keepFailed: true } };
  let o: { -readonly [K in keyof SoakOptions]: SoakOptions[K] } = { ...a.o };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    const int = (): number => {
      const n = Number(value());
      if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${flag} needs a whole number`);
      return n;
    };
    if (flag === "--rounds") a.rounds = int();
    else if (flag === "--seed") a.seed = int();
    else if (flag === "--budget-minutes") a.budgetMs = Number(value()) * 60_000;
    else if (flag === "--round") a.only = int();
    else if (flag === "--from") a.from = int();
    else if (flag === "--phases") o = { ...o, phases: listOf<Phase>(value(), PHASES, "phase") };
    else if (flag === "--targets") o = { ...o, targets: listOf<Target>(value(), TARGETS, "target") };
    else if (flag === "--no-handoff") o.handoff = false;
    else if (flag === "--no-sandbox") o.sandbox = false;
    else if (flag === "--no-keep") o.keepFailed = false;
    else if (flag === "--no-build") a.build = false;
    else if (flag === "--verbose") o.verbose = true;
    else if (flag === "--dump") a.dump = value();
    else if (flag === "--help" || flag === "-h") {
      console.log(USAGE);
      process.exit(0);
    }
    else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  if (Number.isNaN(a.budgetMs) || a.budgetMs <= 0) throw new Error("--budget-minutes needs a positive number");
  a.o = o;
  return a;
}

/** The options a round's plan depends on, for its reproduction command. */
function planFlags(o: SoakOptions): string {
  return [o.phases ? ` --phases ${o.phases.join(",")}` : "", o.targets ? ` --targets ${o.targets.join(",")}` : "", o.handoff ? "" : " --no-handoff", o.sandbox ? "" : " --no-sandbox"].join("");
}

function printRound(r: RoundResult, seed: number, total: number, flags: string): void {
  for (const line of r.trace) console.log(`  | ${line}`);
  const t = r.plan.trigger;
  const what = `kill ${r.plan.kill.target}${r.killed ? "" : " (no process)"} in ${t.phase}${r.observed === "missed" ? " (phase missed)" : ""}`;
  const head = `round ${r.round}/${total}: ${what}, ${(r.ms / 1000).toFixed(1)} s`;
  if (r.violations.length === 0) {
    console.log(`${head}: ok`);
    return;
  }
  console.log(`${head}: ${r.violations.length} violation(s) — reproduce: npm run soak -- --seed ${seed} --round ${r.round}${flags}`);
  for (const v of r.violations) console.log(`  [${v.invariant}] ${v.detail}`);
  console.log(describePlan(r.plan).replace(/^/gm, "  plan: "));
  console.log(`  home kept: ${r.home}`);
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.build) await buildAll();
  const root = mkdtempSync(join(tmpdir(), "tau-soak-"));
  const fake = await FakeOpenAI.start();
  const model = new SoakModel();
  fake.respondWith(model.respond);
  if (args.dump !== undefined) {
    mkdirSync(args.dump, { recursive: true });
    model.dumpDir = args.dump;
  }
  const first = args.only ?? args.from;
  const last = args.only ?? args.from + args.rounds - 1;
  console.log(`soak: seed ${args.seed}, rounds ${first}–${last}${Number.isFinite(args.budgetMs) ? `, budget ${args.budgetMs / 60_000} min` : ""}, root ${root}`);
  const started = Date.now();
  const results: RoundResult[] = [];
  try {
    for (let n = first; n <= last; n++) {
      if (Date.now() - started > args.budgetMs) {
        console.log(`soak: time budget spent after ${results.length} rounds`);
        break;
      }
      const r = await runRound({ root, seed: args.seed, baseUrl: fake.baseUrl, model, o: args.o }, n);
      // Nothing of an earlier round may come back to life after its end either.
      const stray = processesOf(root);
      const violations = [...r.violations, ...stray.map((p) => ({ invariant: "leftover.processes" as const, detail: `a process of an earlier round is alive after round ${n}: ${p.cmd.slice(0, 160)}` }))];
      for (const p of stray) killQuietly(p.pid);
      const result = { ...r, violations };
      results.push(result);
      printRound(result, args.seed, last, planFlags(args.o));
    }
  } finally {
    await fake.close();
  }
  printSummary(results, { seed: args.seed, ms: Date.now() - started, invariants: INVARIANTS, command: `npm run soak -- ${process.argv.slice(2).join(" ")}`.trim() });
  if (readdirSync(root).length === 0) rmSync(root, { recursive: true, force: true });
  return results.some((r) => r.violations.length > 0) || results.length === 0 ? 1 : 0;
}

// A promise of a round that was ended (its watchdog) may still reject: note it, go on.
process.on("unhandledRejection", (e) => console.error(`soak: a late failure of an ended round: ${e instanceof Error ? e.message : String(e)}`));

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(2);
  },
);
