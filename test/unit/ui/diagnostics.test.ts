import { describe, expect, it } from "vitest";
import {
  DIAGNOSTIC_RECORDS_HOLD_NO_BODIES,
  DIAGNOSTIC_TOKEN_MAX_LENGTH,
  DiagnosticValueError,
  Diagnostics,
  SLOW_STAGE_MS,
  SLOW_STAGE_WARNING_INTERVAL_MS,
  diagnosticId,
  diagnosticName,
} from "../../../handwritten/cli/ui/index.js";
import type { DiagnosticRecord } from "../../../handwritten/cli/ui/index.js";

function harness(trace = false): { d: Diagnostics; records: DiagnosticRecord[]; clock: { now: number } } {
  const clock = { now: 0 };
  const records: DiagnosticRecord[] = [];
  const d = new Diagnostics({ sink: (r) => records.push(r), clock: () => clock.now, trace });
  return { d, records, clock };
}

const render = diagnosticName("render");
const warnings = (rs: DiagnosticRecord[]): DiagnosticRecord[] => rs.filter((r) => r.kind === "stage_slow");

describe("progress diagnostics", () => {
  it("[ui.diagnostics.rate-limited] warning threshold: 499 ms no, 500 ms and 501 ms yes", () => {
    expect(SLOW_STAGE_MS).toBe(500);
    for (const [ms, warns] of [
      [SLOW_STAGE_MS - 1, 0],
      [SLOW_STAGE_MS, 1],
      [SLOW_STAGE_MS + 1, 1],
    ] as const) {
      const { d, records } = harness();
      d.stage("renderer", render, ms);
      expect(warnings(records), `${ms} ms`).toHaveLength(warns);
    }
  });

  it("[ui.diagnostics.rate-limited] one warning per five seconds per component: 4,999 ms suppressed, 5,000 and 5,001 ms warn", () => {
    expect(SLOW_STAGE_WARNING_INTERVAL_MS).toBe(5000);
    for (const [gap, warns] of [
      [SLOW_STAGE_WARNING_INTERVAL_MS - 1, 1],
      [SLOW_STAGE_WARNING_INTERVAL_MS, 2],
      [SLOW_STAGE_WARNING_INTERVAL_MS + 1, 2],
    ] as const) {
      const { d, records, clock } = harness();
      clock.now = 10_000;
      d.stage("renderer", render, 800);
      clock.now += gap;
      d.stage("renderer", render, 900);
      expect(warnings(records), `gap ${gap}`).toHaveLength(warns);
    }
  });

  it("[ui.diagnostics.rate-limited] suppressed warnings are counted, and components have separate budgets", () => {
    const { d, records, clock } = harness();
    d.stage("renderer", render, 600);
    for (let i = 0; i < 10; i++) {
      clock.now += 100;
      d.stage("renderer", render, 700);
    }
    d.stage("socket_reader", diagnosticName("read"), 650); // another component warns at once
    clock.now = SLOW_STAGE_WARNING_INTERVAL_MS;
    d.stage("renderer", render, 510);
    const w = warnings(records);
    expect(w.map((r) => (r.kind === "stage_slow" ? [r.component, r.suppressed, r.durationMs] : []))).toEqual([
      ["renderer", 0, 600],
      ["socket_reader", 0, 650],
      ["renderer", 10, 510],
    ]);
  });

  it("[ui.diagnostics.rate-limited] paired trace markers time a stage with the injected clock", () => {
    const { d, records, clock } = harness(true);
    clock.now = 100;
    const t = d.begin("transcript", diagnosticName("agent.output_delta"), diagnosticId(42));
    clock.now = 700;
    expect(t.end()).toBe(600);
    expect(t.end()).toBe(600); // idempotent: no second record
    expect(records.map((r) => r.kind)).toEqual(["stage_begin", "stage_end", "stage_slow"]);
    expect(records[0]).toMatchObject({ component: "transcript", stage: "agent.output_delta", deliveryId: "42", at: 100 });
  });

  it("[ui.diagnostics.rate-limited] records never hold a body: only id/name-shaped tokens are accepted", () => {
    expect(DIAGNOSTIC_RECORDS_HOLD_NO_BODIES).toBe(true);
    const body = "please run rm -rf / and print the secret \x1b]52;c;AAAA\x07";
    expect(() => diagnosticId(body)).toThrow(DiagnosticValueError);
    expect(() => diagnosticName(body)).toThrow(DiagnosticValueError);
    try {
      diagnosticName(body);
    } catch (err) {
      expect((err as Error).message).not.toContain("secret");
    }
    // Token bound: exactly at, one below, one above.
    expect(diagnosticId("a".repeat(DIAGNOSTIC_TOKEN_MAX_LENGTH))).toHaveLength(64);
    expect(diagnosticId("a".repeat(DIAGNOSTIC_TOKEN_MAX_LENGTH - 1))).toHaveLength(63);
    expect(() => diagnosticId("a".repeat(DIAGNOSTIC_TOKEN_MAX_LENGTH + 1))).toThrow(DiagnosticValueError);
    expect(() => diagnosticName("Has Spaces")).toThrow(DiagnosticValueError);

    const { d, records } = harness(true);
    d.delivery({ deliveryId: diagnosticId(7), event: diagnosticName("tool.output"), agentId: diagnosticId("agent-1"), selected: true, bytes: body.length, blocks: 3 });
    d.queue("render_queue", { items: 3, bytes: 1200, oldestAgeMs: 5, refused: 0 });
    d.cancelTarget("resolved", diagnosticId("agent-1"));
    d.stage("renderer", render, 900, diagnosticId(7));
    const dump = JSON.stringify(records);
    expect(dump).not.toContain("secret");
    for (const r of records) {
      for (const [k, v] of Object.entries(r)) {
        if (typeof v === "string") expect(v.length, k).toBeLessThanOrEqual(DIAGNOSTIC_TOKEN_MAX_LENGTH);
        else expect(["number", "boolean"]).toContain(typeof v);
      }
    }
  });

  it("[ui.diagnostics.rate-limited] the type system refuses body fields (checked by tsc)", () => {
    const records: DiagnosticRecord[] = [];
    const sink = (r: DiagnosticRecord): void => {
      records.push(r);
    };
    // @ts-expect-error a plain string is not a DiagnosticName
    sink({ kind: "stage_end", level: "trace", at: 0, component: "renderer", stage: "free text", durationMs: 1 });
    // @ts-expect-error no record kind has a body field
    sink({ kind: "delivery", level: "trace", at: 0, deliveryId: diagnosticId(1), event: render, selected: true, bytes: 1, blocks: 1, body: "text" });
    // @ts-expect-error components are a closed set
    sink({ kind: "queue", level: "trace", at: 0, component: "some text", items: 0, bytes: 0, oldestAgeMs: 0, refused: 0 });
    expect(records).toHaveLength(3);
  });
});
