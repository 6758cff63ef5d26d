// The rules the conformance checks apply, read from the records: the dependency rule and its
// exceptions (ARCH-tau), the publisher classes of each folder and the successor exceptions
// (SPEC-event-publication).
import type { Problems } from "../errors.js";
import { PUBLISHER_CLASSES } from "../records.js";
import { listCell, readRecordTable } from "./record-tables.js";

export const GENERATED = "generated";

export interface ImportException {
  readonly name: string;
  readonly from: string;
  readonly to: string;
  /** Repository-relative paths (`handwritten/cli/x.ts`) the crossing is allowed from. */
  readonly files: readonly string[];
  readonly where: string;
}

export interface FolderPublisher {
  /** A folder of handwritten/ (`harness`, `extensions/shell`). */
  readonly folder: string;
  readonly classes: readonly string[];
  readonly directed: boolean;
  readonly where: string;
}

export type SuccessorCheck = "TAU-C040" | "TAU-C041" | "TAU-C042";

export interface SuccessorException {
  readonly name: string;
  readonly check: SuccessorCheck;
  readonly event: string;
  readonly successors: readonly string[];
  readonly where: string;
}

export interface ConformanceRules {
  /** folder → what it may import besides itself (folders, or `generated`). */
  readonly mayImport: ReadonlyMap<string, ReadonlySet<string>>;
  readonly importExceptions: readonly ImportException[];
  readonly publishers: readonly FolderPublisher[];
  readonly successorExceptions: readonly SuccessorException[];
}

const SUCCESSOR_CHECKS: readonly string[] = ["TAU-C040", "TAU-C041", "TAU-C042"];

export function readRules(root: string, problems: Problems): ConformanceRules {
  const mayImport = new Map<string, Set<string>>();
  const ruleRows = readRecordTable(root, "ARCH-tau", ["folder", "may import"], problems);
  for (const row of ruleRows) {
    const [folder = "", targets = ""] = row.cells;
    if (mayImport.has(folder)) problems.coded("TAU-C090", row.where, `folder ${folder} has two rows`);
    mayImport.set(folder, new Set(listCell(targets)));
  }
  for (const row of ruleRows) {
    for (const t of mayImport.get(row.cells[0] ?? "") ?? []) {
      if (t !== GENERATED && !mayImport.has(t)) problems.coded("TAU-C090", row.where, `${row.cells[0]} may import ${t}, which has no row of its own`);
    }
  }

  const importExceptions: ImportException[] = [];
  for (const row of readRecordTable(root, "ARCH-tau", ["exception", "from", "to", "files", "until"], problems)) {
    const [name = "", from = "", to = "", files = ""] = row.cells;
    if (!mayImport.has(from) || (!mayImport.has(to) && to !== GENERATED)) {
      problems.coded("TAU-C090", row.where, `exception ${name}: ${from} → ${to} names a folder with no row in the dependency rule`);
    }
    if (listCell(files).length === 0) problems.coded("TAU-C090", row.where, `exception ${name} lists no files`);
    importExceptions.push({ name, from, to, files: listCell(files), where: row.where });
  }

  const publishers: FolderPublisher[] = [];
  for (const row of readRecordTable(root, "SPEC-event-publication", ["folder", "publishes as", "sends directed"], problems)) {
    const [folder = "", classes = "", directed = ""] = row.cells;
    const list = listCell(classes);
    for (const c of list) {
      if (!(PUBLISHER_CLASSES as readonly string[]).includes(c) || c === "ext:any") {
        problems.coded("TAU-C090", row.where, `folder ${folder}: "${c}" is not a concrete publisher class`);
      }
    }
    if (directed !== "yes" && directed !== "no") problems.coded("TAU-C090", row.where, `folder ${folder}: sends directed must be yes or no, got "${directed}"`);
    if (publishers.some((p) => p.folder === folder)) problems.coded("TAU-C090", row.where, `folder ${folder} has two rows`);
    publishers.push({ folder, classes: list, directed: directed === "yes", where: row.where });
  }

  const successorExceptions: SuccessorException[] = [];
  for (const row of readRecordTable(root, "SPEC-event-publication", ["exception", "check", "event", "successors", "why"], problems)) {
    const [name = "", check = "", event = "", successors = ""] = row.cells;
    if (!SUCCESSOR_CHECKS.includes(check)) problems.coded("TAU-C090", row.where, `exception ${name}: check must be one of ${SUCCESSOR_CHECKS.join(", ")}, got "${check}"`);
    if (listCell(successors).length === 0) problems.coded("TAU-C090", row.where, `exception ${name} lists no successors`);
    successorExceptions.push({ name, check: check as SuccessorCheck, event, successors: listCell(successors), where: row.where });
  }
  const names = new Set<string>();
  for (const e of [...importExceptions, ...successorExceptions]) {
    if (names.has(e.name)) problems.coded("TAU-C090", e.where, `exception name ${e.name} is used twice`);
    names.add(e.name);
  }
  return { mayImport, importExceptions, publishers, successorExceptions };
}

/** The publisher row of a file (its path inside handwritten/): the longest folder that holds it. */
export function publisherOf(rules: ConformanceRules, rel: string): FolderPublisher | undefined {
  let best: FolderPublisher | undefined;
  for (const p of rules.publishers) {
    if (rel.startsWith(`${p.folder}/`) && (best === undefined || p.folder.length > best.folder.length)) best = p;
  }
  return best;
}
