// The static conformance checks: what handwritten/ publishes, sends and imports, and what its
// consumers declare, against the registry, the authority matrix and the record tables.
import { relative, sep } from "node:path";
import type { Problems } from "../errors.js";
import { GENERATED, publisherOf, type ConformanceRules, type SuccessorException } from "./rules.js";
import type { ConsumerDeclaration, EventSite, TreeScan } from "./scan.js";

/** One authority row, as much of it as the checks need. */
export interface MatrixRow {
  readonly publishers: readonly string[];
  readonly persistence: string;
  readonly successors: readonly string[];
  readonly record: string;
}

export type Matrix = ReadonlyMap<string, MatrixRow>;

export interface TreePaths {
  /** The handwritten/ tree. */
  readonly handwritten: string;
  /** The generated/ tree its imports may reach. */
  readonly generated: string;
}

/** Whether a row's publishers admit any of these classes (a capability is the instance's configuration, not the code's). */
export function admitsAny(publishers: readonly string[], classes: readonly string[]): boolean {
  return classes.some((cls) =>
    publishers.some((p) => {
      const base = p.split("+")[0];
      return base === cls || (base === "ext:any" && cls.startsWith("ext:"));
    }),
  );
}

/** Every check; exceptions that matched nothing are reported too (TAU-C091). */
export function checkConformance(scan: TreeScan, matrix: Matrix, rules: ConformanceRules, paths: TreePaths, problems: Problems): void {
  const used = new Set<string>();
  checkSites(scan.sites, matrix, rules, problems);
  checkImports(scan, rules, paths, problems, used);
  if (scan.consumers === undefined) {
    problems.coded("TAU-C045", scan.consumersFile, "missing: it declares each post-commit consumer, the events it handles and the successors it may publish");
  } else {
    checkConsumers(scan.consumers, scan.sites, matrix, rules.successorExceptions, problems, used);
  }
  for (const e of [...rules.importExceptions, ...rules.successorExceptions]) {
    if (!used.has(e.name)) problems.coded("TAU-C091", e.where, `exception ${e.name} matches nothing any more: remove it`);
  }
}

function record(row: MatrixRow): string {
  return `records/${row.record}.md`;
}

export function checkSites(sites: readonly EventSite[], matrix: Matrix, rules: ConformanceRules, problems: Problems): void {
  for (const s of sites) {
    const row = matrix.get(s.event);
    if (!row) {
      problems.coded("TAU-C010", s.where, `${s.via} names event ${s.event}, which is not in the registry (generated/events.ts)`);
      continue;
    }
    if (s.kind !== "publish" && s.kind !== "direct") continue;
    const pub = publisherOf(rules, s.rel);
    const folder = pub?.folder ?? s.rel.split("/")[0];
    if (s.kind === "publish") {
      if (!pub) {
        problems.coded("TAU-C012", s.where, `${s.via} publishes ${s.event}, but handwritten/${folder} has no publisher class (SPEC-event-publication, "Publishers in the code")`);
      } else if (!admitsAny(row.publishers, pub.classes)) {
        problems.coded(
          "TAU-C011",
          s.where,
          `${s.via} publishes ${s.event} from handwritten/${folder}, which publishes as ${pub.classes.join(", ")}; ${record(row)} lets only ${row.publishers.join(", ")} publish it`,
        );
      } else if (row.persistence === "directed") {
        problems.coded("TAU-C013", s.where, `${s.via} publishes ${s.event} through the bus; it is a directed event (${record(row)}): send it with a direct message`);
      }
      continue;
    }
    if (!pub?.directed) {
      problems.coded(
        "TAU-C020",
        s.where,
        `${s.via} sends ${s.event} as a direct message from handwritten/${folder}, which may not send direct messages (SPEC-event-publication, "Publishers in the code")`,
      );
    } else if (row.persistence !== "directed" || !admitsAny(row.publishers, pub.classes)) {
      problems.coded(
        "TAU-C021",
        s.where,
        `${s.via} sends ${s.event} as a direct message, but ${record(row)} makes it a ${row.persistence} event published by ${row.publishers.join(", ")}, not a directed event of ${pub.classes.join(", ")}`,
      );
    }
  }
}

export function checkImports(scan: TreeScan, rules: ConformanceRules, paths: TreePaths, problems: Problems, used: Set<string>): void {
  const unruled = new Set<string>();
  for (const i of scan.imports) {
    const from = i.rel.split("/")[0] ?? "";
    const allowed = rules.mayImport.get(from);
    if (!allowed) {
      if (!unruled.has(from)) problems.coded("TAU-C032", i.where, `handwritten/${from} has no row in the dependency rule (records/ARCH-tau.md)`);
      unruled.add(from);
      continue;
    }
    const to = targetFolder(i.target, paths);
    if (to === undefined) {
      problems.coded("TAU-C031", i.where, `imports ${i.specifier}, which is outside handwritten/ and generated/`);
      continue;
    }
    if (to === from || allowed.has(to)) continue;
    const file = `handwritten/${i.rel}`;
    const exception = rules.importExceptions.find((e) => e.from === from && e.to === to && e.files.includes(file));
    if (exception) {
      used.add(exception.name);
      continue;
    }
    problems.coded(
      "TAU-C030",
      i.where,
      `${from} imports ${to} (${i.specifier}); the dependency rule (records/ARCH-tau.md) lets ${from} import only ${[...allowed].join(", ")}`,
    );
  }
}

function targetFolder(target: string, paths: TreePaths): string | undefined {
  const inside = (dir: string) => {
    const r = relative(dir, target);
    return r !== "" && !r.startsWith("..") && !r.startsWith(sep) ? r.split(sep) : undefined;
  };
  const h = inside(paths.handwritten);
  if (h) return h.length > 1 ? h[0] : undefined; // a file right in handwritten/ belongs to no folder
  if (inside(paths.generated)) return GENERATED;
  return undefined;
}

/**
 * The consumer table against the matrix, both ways, and against the `onCommitted` sites. A matrix
 * successor is required of the harness's consumers only when the harness may publish it; one only
 * extensions publish is their handlers' to produce (none is listed today).
 */
export function checkConsumers(
  decls: readonly ConsumerDeclaration[],
  sites: readonly EventSite[],
  matrix: Matrix,
  exceptions: readonly SuccessorException[],
  problems: Problems,
  used: Set<string>,
): void {
  const excused = (check: SuccessorException["check"], event: string, successor: string) => {
    const e = exceptions.find((x) => x.check === check && x.event === event && x.successors.includes(successor));
    if (e) used.add(e.name);
    return e !== undefined;
  };
  const byEvent = new Map<string, ConsumerDeclaration[]>();
  for (const d of decls) {
    const row = matrix.get(d.event);
    if (!row) {
      problems.coded("TAU-C010", d.where, `consumer ${d.consumer} handles event ${d.event}, which is not in the registry (generated/events.ts)`);
      continue;
    }
    byEvent.set(d.event, [...(byEvent.get(d.event) ?? []), d]);
    for (const s of d.successors) {
      if (!matrix.has(s)) {
        problems.coded("TAU-C010", d.where, `consumer ${d.consumer} declares successor ${s}, which is not in the registry (generated/events.ts)`);
      } else if (!row.successors.includes(s) && !excused("TAU-C040", d.event, s)) {
        problems.coded(
          "TAU-C040",
          d.where,
          `consumer ${d.consumer} declares successor ${s} of ${d.event}, which the authority matrix does not list (${record(row)} lists: ${row.successors.join(", ") || "none"})`,
        );
      }
    }
  }
  for (const [event, row] of [...matrix].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const required = row.successors.filter((s) => matrix.get(s)?.publishers.includes("harness"));
    if (required.length === 0) continue;
    const handlers = byEvent.get(event);
    if (!handlers) {
      const missing = required.filter((s) => !excused("TAU-C042", event, s));
      if (missing.length > 0) {
        problems.coded("TAU-C042", record(row), `no consumer handles ${event}, whose authority row lists successor(s) ${missing.join(", ")} that the harness publishes`);
      }
      continue;
    }
    const declared = new Set(handlers.flatMap((d) => d.successors));
    for (const s of required) {
      if (declared.has(s) || excused("TAU-C041", event, s)) continue;
      problems.coded(
        "TAU-C041",
        handlers[0]?.where ?? record(row),
        `the consumers of ${event} (${handlers.map((d) => d.consumer).join(", ")}) do not declare successor ${s}, which ${record(row)} lists for it`,
      );
    }
  }
  // A `consume(consumer, event, …)` site and a declaration match by consumer and event; a bare
  // `onCommitted(event, …)` site matches any consumer's declaration of the event.
  const consumeSites = sites.filter((s) => s.kind === "consume" && matrix.has(s.event));
  const matches = (s: EventSite, d: ConsumerDeclaration) => s.event === d.event && (s.consumer === undefined || s.consumer === d.consumer);
  for (const s of consumeSites) {
    if (decls.some((d) => matches(s, d))) continue;
    const who = s.consumer === undefined ? "no consumer declares" : `consumer ${s.consumer} does not declare`;
    problems.coded("TAU-C043", s.where, `${s.via} handles ${s.event}, which ${who} (handwritten/harness/consumers.ts)`);
  }
  for (const d of decls) {
    if (matrix.has(d.event) && !consumeSites.some((s) => matches(s, d))) {
      problems.coded("TAU-C044", d.where, `consumer ${d.consumer} declares ${d.event}, which no onCommitted or consume site of it handles`);
    }
  }
}
