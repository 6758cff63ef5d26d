// Static conformance of handwritten/ (ARCH-tau "Dependency rule", SPEC-event-publication
// "Publishers in the code" and "Consumers and successors"): run by `npm run codegen` and
// `codegen:check`; every failure names its file and line and carries a TAU-C0xx code.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker, threadId } from "node:worker_threads";
import { Problems } from "../errors.js";
import type { CodegenCode } from "../codes.js";
import type { Tables } from "../tables.js";
import { readRules, type ConformanceRules } from "./rules.js";
import { scanTree, type TreeScan } from "./scan.js";
import { checkConformance, type Matrix, type MatrixRow } from "./check.js";

export { readRules, type ConformanceRules } from "./rules.js";
export { scanTree, type TreeScan, type EventSite, type ConsumerDeclaration } from "./scan.js";
export { checkConformance, checkConsumers, checkImports, checkSites, type Matrix, type MatrixRow, type TreePaths } from "./check.js";
export { emitConsumers } from "./emit.js";

export function matrixOf(tables: Tables): Matrix {
  return new Map<string, MatrixRow>(tables.events.map((e) => [e.name, e.authority]));
}

/** A scan and the problems it found, as plain data (it may come from a worker thread). */
export interface ScanResult {
  readonly scan: TreeScan;
  readonly problems: ReadonlyArray<{ readonly file: string; readonly detail: string; readonly code?: CodegenCode | undefined }>;
  /** The thread that scanned (worker_threads' threadId; 0 is the main thread). */
  readonly thread: number;
}

export function scanHere(dir: string, reportRoot: string): ScanResult {
  const problems = new Problems();
  const scan = scanTree(dir, reportRoot, problems);
  return { scan, problems: problems.list.map((p) => ({ file: p.file, detail: p.detail, code: p.code })), thread: threadId };
}

/** A scan under way on a worker thread. */
export interface PendingScan {
  readonly result: Promise<ScanResult>;
  /** Stops the worker; `result` then never settles (codegen failed before it needed the scan). */
  cancel(): void;
}

/**
 * Scans handwritten/ in a worker thread, so that its parse overlaps the TypeSpec compile (it needs
 * nothing the compile produces). The worker loads the TypeScript sources through tsx, as codegen
 * itself runs; if it cannot start or fails, the scan runs on this thread instead.
 */
export function scanInWorker(dir: string, reportRoot: string): PendingScan {
  let done = false;
  let worker: Worker | undefined;
  const result = new Promise<ScanResult>((resolve, reject) => {
    const finish = (r: () => ScanResult) => {
      if (done) return;
      done = true;
      try {
        resolve(r());
      } catch (err) {
        reject(err);
      }
    };
    try {
      const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx/esm/api")).href;
      const entry = new URL("./scan-worker.ts", import.meta.url).href;
      const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
      worker = new Worker(boot, { eval: true, workerData: { dir, reportRoot } });
      worker.once("message", (m: ScanResult) => finish(() => m));
      worker.once("error", () => finish(() => scanHere(dir, reportRoot)));
      worker.once("exit", () => finish(() => scanHere(dir, reportRoot)));
    } catch {
      finish(() => scanHere(dir, reportRoot));
    }
  });
  // A scan that fails before generate awaits it is still reported then, not as an unhandled rejection.
  result.catch(() => undefined);
  return {
    result,
    cancel: () => {
      done = true;
      void worker?.terminate();
    },
  };
}

/**
 * Checks a handwritten/ tree against the rules in `root`'s records. `handwritten` defaults to the
 * root's own; paths in messages are relative to `reportRoot` (the root unless given). `scanned` is
 * a scan already made of the same tree (scanInWorker).
 */
export function runConformance(
  root: string,
  matrix: Matrix,
  problems: Problems,
  handwritten = join(root, "handwritten"),
  reportRoot = root,
  scanned: ScanResult = scanHere(handwritten, reportRoot),
): { scan: TreeScan; rules: ConformanceRules } {
  const rules = readRules(root, problems);
  for (const p of scanned.problems) {
    if (p.code === undefined) problems.add(p.file, p.detail);
    else problems.coded(p.code, p.file, p.detail);
  }
  const { scan } = scanned;
  checkConformance(scan, matrix, rules, { handwritten, generated: join(dirname(handwritten), "generated") }, problems);
  return { scan, rules };
}
