// How a `tau run` ends, as declared (SPEC-cli-manners, "How a run ends"): one table of ends, whose
// statuses are exactly the run stream schema's, each with its codes and exit status, listed alike by
// the record and the docs site; and the closing line and the published schema document agree.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { renderErrors, runEndExit } from "../../../codegen/docs/errors.js";
import { runStreamSchema } from "../../../codegen/docs/run-stream.js";
import type { JsonSchema } from "../../../codegen/typespec.js";
import { AUTHORITY } from "../../../generated/authority.js";
import { validateRunStreamLine } from "../../../generated/validators.js";
import { ERROR_DOCS, RUN_ENDS, errorEntries } from "../../../handwritten/cli/error-docs.js";
import { EXIT_CODES, TAU_ERRORS, TauError, exitCodeOf, type TauErrorCode } from "../../../handwritten/cli/errors.js";
import { COMPLETED, closingLine, endWith, exitCodeOfEnd } from "../../../handwritten/cli/run/index.js";
import { REPO_ROOT } from "../../support/paths.js";

const SCHEMAS = join(REPO_ROOT, "generated", "schemas");

function generatedSchemas(): Map<string, JsonSchema> {
  return new Map(readdirSync(SCHEMAS).map((f) => [f, JSON.parse(readFileSync(join(SCHEMAS, f), "utf8")) as JsonSchema]));
}

/** Every code tau run reports, but the launcher script's own (not_started) and the early daemon's. */
function runCodes(): TauErrorCode[] {
  return (Object.keys(ERROR_DOCS) as TauErrorCode[]).filter((c) => /\btau run\b/.test(ERROR_DOCS[c].commands) && TAU_ERRORS[c] !== "not_started");
}

describe("the ends of a tau run", () => {
  it("[run.end.table-documented] one status per end, the schema's exactly, each code of tau run in the end of its kind; the record and the errors page list the same", () => {
    const statuses = RUN_ENDS.map((e) => e.status);
    const schema = JSON.parse(readFileSync(join(SCHEMAS, "RunEndStatus.json"), "utf8")) as { enum: string[] };
    expect([...statuses].sort()).toEqual([...schema.enum].sort());
    expect(new Set(statuses).size).toBe(statuses.length);
    // Each status its own exit status: 0, 1, 2 and 130 keep their meanings; no end but completion exits 0.
    const exits = RUN_ENDS.map((e) => runEndExit(e.status, EXIT_CODES));
    expect(exits[0]).toBe(0);
    expect(exits.slice(1).every((x) => x !== 0)).toBe(true);
    expect(Object.fromEntries(RUN_ENDS.map((e) => [e.status, runEndExit(e.status, EXIT_CODES)]))).toMatchObject({ completed: 0, failed: 1, usage: 2, config: 2, cancelled: 130 });
    const newEnds = ["refused", "unreachable", "cut_short", "daemon_lost"] as const;
    expect(new Set(newEnds.map((k) => EXIT_CODES[k])).size).toBe(newEnds.length);
    for (const k of newEnds) expect([0, 1, 2, 3, 130]).not.toContain(EXIT_CODES[k]);
    for (const end of RUN_ENDS) for (const code of end.codes) expect(TAU_ERRORS[code], code).toBe(end.status);
    expect(RUN_ENDS.flatMap((e) => e.codes).sort()).toEqual(runCodes().filter((c) => c !== "TAU-E0106").sort());

    // SPEC-cli-manners lists the same ends, exit statuses and codes.
    const record = readFileSync(join(REPO_ROOT, "records", "SPEC-cli-manners.md"), "utf8");
    const rows = [...record.matchAll(/^\| ([a-z_]+) \| (\d+) \| ([^|]*) \|/gm)].map((m) => ({ status: m[1], exit: Number(m[2]), codes: (m[3] ?? "").match(/TAU-E\d{4}/g) ?? [] }));
    expect(rows).toEqual(RUN_ENDS.map((e) => ({ status: e.status, exit: runEndExit(e.status, EXIT_CODES), codes: [...e.codes] })));

    // The docs site's errors page has a row per end with its exit status and codes.
    const html = renderErrors({ errors: errorEntries(), exitCodes: EXIT_CODES, runEnds: RUN_ENDS }, (md) => md, "SPEC");
    for (const end of RUN_ENDS) {
      const row = new RegExp(`<tr id="run-end-${end.status}"><td><code>${end.status}</code></td><td><code>(\\d+)</code></td><td>([^<]*(?:<a [^>]*>TAU-E\\d{4}</a> ?)*)</td>`).exec(html);
      expect(row, end.status).not.toBeNull();
      expect(Number(row?.[1])).toBe(runEndExit(end.status, EXIT_CODES));
      expect(row?.[2]?.match(/TAU-E\d{4}/g) ?? []).toEqual([...end.codes]);
    }
  });

  it("[run.end.table-documented] every end's closing line is a valid line that carries its status, exit status and code", () => {
    const ends = [COMPLETED, ...RUN_ENDS.flatMap((e) => e.codes.map((c) => endWith(new TauError(c, `tau run: what happened to ${c}\nSee: tau run --help`))))];
    for (const end of ends) {
      const line = closingLine(end, { agentId: "a-1", promptId: "p-1" });
      expect(line.endsWith("\n") && !line.slice(0, -1).includes("\n")).toBe(true);
      const parsed = JSON.parse(line) as { event: string; data: Record<string, unknown> };
      expect(validateRunStreamLine(parsed), JSON.stringify(validateRunStreamLine.errors)).toBe(true);
      expect(parsed.event).toBe("run.ended");
      expect(parsed.data).toMatchObject({ status: end.status, exit_code: exitCodeOfEnd(end), agent_id: "a-1", prompt_id: "p-1", format_version: 1 });
      if (end.status === "completed") expect(parsed.data).toMatchObject({ message: "the prompt completed" });
      else {
        expect(parsed.data).toMatchObject({ code: end.error.code, exit_code: exitCodeOf(end.error.code) });
        expect(parsed.data.message).toBe(`what happened to ${end.error.code}\nSee: tau run --help`);
      }
    }
    // The end a run's launcher child has is none of a run's.
    expect(() => endWith(new TauError("TAU-E0405", "x"))).toThrow(/TAU-E0405/);
    // A replayed agent.started read from a journal is the harness's: it has no other publisher.
    expect(AUTHORITY["agent.started"].publishers).toEqual(["harness"]);
  });

  it("[run.json.schema-published] the published schema document is self-contained JSON Schema 2020-12 that accepts the run's lines and refuses others", () => {
    const published = runStreamSchema(generatedSchemas());
    // It must stand alone: a fresh validator, strict, with nothing else added.
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    const validate = ajv.compile(JSON.parse(JSON.stringify(published)) as object);
    const event = { seq: 4, at_us: 1_700_000_000_000_000, event: "agent.started", by: "harness", data: { agent_id: "a-1" } };
    expect(validate(event), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...event, by: "extension:shell", replay: true })).toBe(true);
    expect(validate(JSON.parse(closingLine(endWith(new TauError("TAU-E0409", "tau: gone")))))).toBe(true);
    expect(validate(JSON.parse(closingLine(COMPLETED)))).toBe(true);
    expect(validate({ seq: 4, name: "agent.started", data: {} })).toBe(false);
    expect(validate({ ...event, by: "somebody" })).toBe(false);
    expect(validate({ ...event, replay: false })).toBe(false);
    expect(validate({ event: "run.ended", at_us: 1, data: { status: "completed", exit_code: 0, message: "x", format_version: 2 } })).toBe(false);
    // The same answers as the generated validator of the spec's schema.
    for (const line of [event, { ...event, extra: 1 }, JSON.parse(closingLine(COMPLETED)) as unknown]) expect(validate(line)).toBe(validateRunStreamLine(line));
  });
});
