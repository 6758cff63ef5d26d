// The page of `tau run --json`'s line format and its published schema: the lines' fields from
// spec/run-stream.tsp, how a run ends, and one self-contained JSON Schema document a script can
// validate lines with (SPEC-cli-manners, "The --json stream").
import type MarkdownIt from "markdown-it";
import type { JsonSchema } from "../typespec.js";
import { esc, fragment, link } from "./html.js";
import { renderInline, type RenderEnv } from "./markdown.js";
import { fieldRows, fieldTable, type TypeContext } from "./schema.js";

export const RUN_STREAM_PAGE = "run-stream.html";
/** The published schema document, beside the pages. */
export const RUN_STREAM_SCHEMA_FILE = "run-stream.schema.json";
/** The root schema of a line, from spec/run-stream.tsp. */
export const RUN_STREAM_ROOT = "RunStreamLine.json";

/** The schemas `root` references, itself included, in sorted order. */
function closure(schemas: ReadonlyMap<string, JsonSchema>, root: string): string[] {
  const seen = new Set<string>();
  const visit = (id: string) => {
    if (seen.has(id)) return;
    const schema = schemas.get(id);
    if (!schema) throw new Error(`${root} references ${id}, which the spec does not declare`);
    seen.add(id);
    for (const ref of refs(schema)) visit(ref);
  };
  visit(root);
  return [...seen].sort();
}

function refs(s: unknown, out: string[] = []): string[] {
  if (Array.isArray(s)) for (const v of s) refs(v, out);
  else if (typeof s === "object" && s !== null) {
    for (const [k, v] of Object.entries(s)) {
      if (k === "$ref" && typeof v === "string" && !v.startsWith("#")) out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

/** A schema without tau's vendor keywords, which a strict validator would refuse. */
function plain(schema: JsonSchema): JsonSchema {
  return Object.fromEntries(Object.entries(schema).filter(([k]) => !k.startsWith("x-tau-") && k !== "$schema"));
}

/**
 * One JSON Schema 2020-12 document for a line of the stream: the root and every schema it
 * references, embedded under `$defs` with their own `$id`s, so their references resolve inside it.
 */
export function runStreamSchema(schemas: ReadonlyMap<string, JsonSchema>): JsonSchema {
  const root = schemas.get(RUN_STREAM_ROOT);
  if (!root) throw new Error(`spec/ declares no ${RUN_STREAM_ROOT}`);
  const defs = Object.fromEntries(closure(schemas, RUN_STREAM_ROOT).map((id) => [id.replace(/\.json$/, ""), plain(schemas.get(id) as JsonSchema)]));
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: RUN_STREAM_SCHEMA_FILE,
    title: "tau run --json line",
    description: root.description,
    $ref: RUN_STREAM_ROOT,
    $defs: defs,
  };
}

export interface RunStreamInput {
  readonly schemas: ReadonlyMap<string, JsonSchema>;
  readonly md: MarkdownIt;
  readonly env: RenderEnv;
  /** A type context for a schema rendered on this page (links to the models page). */
  readonly typeCtx: (schema: JsonSchema) => TypeContext;
  /** HTML links to the record of a run's manners and to that of the trace export. */
  readonly recordLinks: { readonly manners: string; readonly trace: string };
}

/** The page's body. */
export function renderRunStream(input: RunStreamInput): string {
  const page = RUN_STREAM_PAGE;
  const { schemas, md, env } = input;
  const table = (id: string) => {
    const schema = schemas.get(id) ?? {};
    return fieldTable(fieldRows(schema, input.typeCtx(schema), md, env), "No fields.");
  };
  const describe = (id: string) => {
    const d = schemas.get(id)?.description;
    return typeof d === "string" ? `<p>${renderInline(md, d, env)}</p>` : "";
  };
  return [
    "<h1><code>tau run --json</code></h1>",
    `<p class="lead">A headless run with <code>--json</code> writes one JSON object per line on standard output: every event of its agent, beginning with the agent's <code>agent.started</code>, then exactly one closing line that says how the run ended. The fields are those of <code>tau agent trace --format jsonl</code> (${input.recordLinks.trace}), so one reader serves both; the rules are in ${input.recordLinks.manners}.</p>`,
    describe(RUN_STREAM_ROOT),
    `<p>Schema: <a href="${esc(RUN_STREAM_SCHEMA_FILE)}"><code>${esc(RUN_STREAM_SCHEMA_FILE)}</code></a> (JSON Schema 2020-12, self-contained; in the repository, <code>generated/schemas/${esc(RUN_STREAM_ROOT)}</code> and the schemas it references).</p>`,
    `<h2 id="${esc(fragment("line", "event"))}">An event</h2>`,
    describe("RunEventLine.json"),
    table("RunEventLine.json"),
    `<h2 id="${esc(fragment("line", "end"))}">The closing line</h2>`,
    describe("RunEndLine.json"),
    table("RunEndLine.json"),
    `<h3 id="${esc(fragment("line", "end-data"))}">Its <code>data</code></h3>`,
    describe("RunEnd.json"),
    table("RunEnd.json"),
    `<p>Its <code>status</code> and <code>exit_code</code> are listed, with each status's codes and message, under ${link(page, "errors.html", "how a tau run ends", "run-ends")}.</p>`,
  ]
    .filter((p) => p !== "")
    .join("\n");
}
