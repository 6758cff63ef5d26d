// Static conformance of handwritten/ (ARCH-tau "Dependency rule", SPEC-event-publication
// "Publishers in the code" and "Consumers and successors"): run by `npm run codegen` and
// `codegen:check`; every failure names its file and line and carries a TAU-C0xx code.
import { dirname, join } from "node:path";
import type { Problems } from "../errors.js";
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

/**
 * Checks a handwritten/ tree against the rules in `root`'s records. `handwritten` defaults to the
 * root's own; paths in messages are relative to `reportRoot` (the root unless given).
 */
export function runConformance(
  root: string,
  matrix: Matrix,
  problems: Problems,
  handwritten = join(root, "handwritten"),
  reportRoot = root,
): { scan: TreeScan; rules: ConformanceRules } {
  const rules = readRules(root, problems);
  const scan = scanTree(handwritten, reportRoot, problems);
  checkConformance(scan, matrix, rules, { handwritten, generated: join(dirname(handwritten), "generated") }, problems);
  return { scan, rules };
}
