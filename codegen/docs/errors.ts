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

export interface ErrorsInput {
  /** Code → kind, commands, meaning (errorEntries(), handwritten/cli/error-docs.ts). */
  errors: Record<string, unknown>;
  /** Kind → exit status (EXIT_CODES). */
  exitCodes: Record<string, number>;
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

/** The page's body; `specLink` is the HTML of a link to the record that states the rules. */
export function renderErrors(input: ErrorsInput, inline: (md: string) => string, specLink: string): string {
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
