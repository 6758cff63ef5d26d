// generated/consumers.ts: the declared consumer table joined with the authority matrix, by consumer
// and by event, for the runtime and the documentation.
import { HEADER } from "../emit.js";
import type { Matrix } from "./check.js";
import type { ConsumerDeclaration } from "./scan.js";

const q = (s: string) => JSON.stringify(s);
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function emitConsumers(decls: readonly ConsumerDeclaration[], matrix: Matrix): string {
  const known = decls.filter((d) => matrix.has(d.event));
  const consumers = [...new Set(known.map((d) => d.consumer))].sort(cmp);
  const lines = [HEADER, 'import type { EventName } from "./events.js";', ""];
  lines.push(
    "export interface ConsumerEntry {",
    "  readonly consumer: string;",
    "  readonly event: EventName;",
    "  /** Every event the consumer may publish or send while handling `event`. */",
    "  readonly successors: readonly EventName[];",
    "  /** The successors the authority matrix does not list for `event` (named exceptions). */",
    "  readonly unlisted: readonly EventName[];",
    "}",
    "",
    "/** Post-commit consumers (handwritten/harness/consumers.ts): consumer → handled event → successors. */",
    "export const CONSUMER_TABLE: { readonly [consumer: string]: { readonly [N in EventName]?: readonly EventName[] } } = {",
  );
  for (const c of consumers) {
    lines.push(`  ${q(c)}: {`);
    for (const d of known.filter((x) => x.consumer === c).sort((a, b) => cmp(a.event, b.event))) {
      lines.push(`    ${q(d.event)}: ${JSON.stringify([...d.successors].sort(cmp))},`);
    }
    lines.push("  },");
  }
  lines.push("};", "", "/** The same table by handled event, each consumer with its successors and what the matrix leaves out. */");
  lines.push("export const CONSUMERS_BY_EVENT: { readonly [N in EventName]?: readonly ConsumerEntry[] } = {");
  for (const event of [...new Set(known.map((d) => d.event))].sort(cmp)) {
    const listed = new Set(matrix.get(event)?.successors ?? []);
    lines.push(`  ${q(event)}: [`);
    for (const d of known.filter((x) => x.event === event).sort((a, b) => cmp(a.consumer, b.consumer))) {
      const successors = [...d.successors].sort(cmp);
      const unlisted = successors.filter((s) => !listed.has(s));
      lines.push(`    { consumer: ${q(d.consumer)}, event: ${q(event)}, successors: ${JSON.stringify(successors)}, unlisted: ${JSON.stringify(unlisted)} },`);
    }
    lines.push("  ],");
  }
  lines.push("};", "");
  return lines.join("\n");
}
