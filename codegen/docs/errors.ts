// The CLI's error codes and exit statuses, read from the CLI's own tables (handwritten/cli/errors.ts
// and error-docs.ts), so the page lists exactly the codes and statuses tau reports (SPEC-cli-errors).
import { esc, fragment, link } from "./html.js";

export interface ErrorRow {
  code: string;
  kind: string;
  exit: number;
  commands: string;
  meaning: string;
  framework: boolean;
}

export interface RunEndRow {
  readonly status: string;
  readonly codes: readonly string[];
  readonly message: string;
  readonly meaning: string;
}

export interface ErrorsInput {
  /** Code → kind, commands, meaning (errorEntries(), handwritten/cli/error-docs.ts). */
  errors: Record<string, unknown>;
  /** Kind → exit status (EXIT_CODES). */
  exitCodes: Record<string, number>;
  /** Every way a `tau run` ends (RUN_ENDS, handwritten/cli/error-docs.ts). */
  runEnds?: readonly RunEndRow[];
}

type Bag = Record<string, unknown>;

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** One row per code, in code order; a code whose kind has no exit status is an error of the table itself. */
export function readErrors(input: ErrorsInput): ErrorRow[] {
  return Object.keys(input.errors)
    .sort()
    .map((code) => {
      const e = (input.errors[code] ?? {}) as Bag;
      const kind = str(e.kind);
      const exit = input.exitCodes[kind];
      if (exit === undefined) throw new Error(`${code}: kind ${JSON.stringify(kind)} has no exit status`);
      return { code, kind, exit, commands: str(e.commands), meaning: str(e.meaning), framework: e.framework === true };
    });
}

/** The exit status of a run's end: 0 for `completed`, else its status's (a status without one is an error of the table). */
export function runEndExit(status: string, exitCodes: Record<string, number>): number {
  if (status === "completed") return 0;
  const exit = exitCodes[status];
  if (exit === undefined) throw new Error(`run end ${JSON.stringify(status)} has no exit status`);
  return exit;
}

/** The table of a `tau run`'s ends; `manners` links the record, `stream` the page of the --json format. */
function renderRunEnds(input: ErrorsInput, inline: (md: string) => string, links: { manners: string; stream: string }): string[] {
  const page = "errors.html";
  const ends = input.runEnds ?? [];
  if (ends.length === 0) return [];
  return [
    '<h2 id="run-ends">How a <code>tau run</code> ends</h2>',
    `<p>Every way a headless run can end has its own status and message (${links.manners}). The status is the kind of the error the run ended with, and decides the exit status; with <code>--json</code> the stream's closing line carries both (${links.stream}).</p>`,
    '<table class="summary run-ends"><thead><tr><th>status</th><th>exit status</th><th>codes</th><th>what it prints</th><th>meaning</th></tr></thead><tbody>',
    ...ends.map((e) => {
      const codes = e.codes.map((c) => link(page, page, c, fragment("error", c))).join(" ");
      return `<tr id="${esc(fragment("run-end", e.status))}"><td><code>${esc(e.status)}</code></td><td><code>${runEndExit(e.status, input.exitCodes)}</code></td><td>${codes}</td><td>${inline(e.message)}</td><td>${inline(e.meaning)}</td></tr>`;
    }),
    "</tbody></table>",
  ];
}

/**
 * The page's body; `specLink` is the HTML of a link to the record that states the rules, `runLinks`
 * those of the record of a run's ends and of the page of the --json format.
 */
export function renderErrors(input: ErrorsInput, inline: (md: string) => string, specLink: string, runLinks = { manners: "<code>SPEC-cli-manners</code>", stream: "<code>tau run --json</code>" }): string {
  const page = "errors.html";
  const rows = readErrors(input);
  const kinds = Object.entries(input.exitCodes);
  const parts = [
    "<h1>Errors and exit statuses</h1>",
    `<p class="lead">Every error the <code>tau</code> CLI reports has a stable code (<code>TAU-E</code> and four digits) and a kind, and the kind alone decides the exit status. Both tables are read from the CLI's own declaration, so this page lists exactly what tau does (${specLink}).</p>`,
    '<h2 id="exit-statuses">Exit statuses</h2>',
    '<table class="summary"><thead><tr><th>kind</th><th>exit status</th><th>codes</th></tr></thead><tbody>',
    "<tr><td><span class=\"muted\">success</span></td><td><code>0</code></td><td></td></tr>",
    ...kinds.map(([kind, exit]) => {
      const codes = rows.filter((r) => r.kind === kind).map((r) => link(page, page, r.code, fragment("error", r.code)));
      return `<tr id="${esc(fragment("kind", kind))}"><td><code>${esc(kind)}</code></td><td><code>${exit}</code></td><td>${codes.join(" ")}</td></tr>`;
    }),
    "</tbody></table>",
    ...renderRunEnds(input, inline, runLinks),
    '<h2 id="codes">Codes</h2>',
    '<table class="summary errors"><thead><tr><th>code</th><th>exit</th><th>kind</th><th>reported by</th><th>meaning</th></tr></thead><tbody>',
    ...rows.map(
      (r) =>
        `<tr id="${esc(fragment("error", r.code))}"><td><code>${esc(r.code)}</code></td><td><code>${r.exit}</code></td><td>${link(page, page, r.kind, fragment("kind", r.kind))}</td><td>${esc(r.commands)}${r.framework ? ' <span class="muted">(the command framework\'s own message)</span>' : ""}</td><td>${inline(r.meaning)}</td></tr>`,
    ),
    "</tbody></table>",
  ];
  return parts.join("\n");
}
