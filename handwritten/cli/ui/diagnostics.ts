// Interactive frontend progress diagnostics: paired trace-level stage markers, slow-stage warnings
// rate-limited per component, queue snapshots and delivery summaries.
//
// A record holds only ids, event/stage names, counts, sizes, ages and durations: never a prompt,
// response, tool, event, terminal-output or disconnect-reason body. The types enforce it: every
// string-valued field is a closed literal union or a branded token that only `diagnosticId` /
// `diagnosticName` mint, and those accept only short identifier-shaped text.

declare const idBrand: unique symbol;
declare const nameBrand: unique symbol;
/** A process-local id (delivery, agent, call): identifier-shaped, at most 64 characters. */
export type DiagnosticId = string & { readonly [idBrand]: true };
/** A typed event or stage name (`agent.output_delta`, `render`): at most 64 characters. */
export type DiagnosticName = string & { readonly [nameBrand]: true };

/** Longest id or name a diagnostic record accepts. */
export const DIAGNOSTIC_TOKEN_MAX_LENGTH = 64;
/** Completed stages at or above this many milliseconds produce a warning. */
export const SLOW_STAGE_MS = 500;
/** At most one slow-stage warning per component per this many milliseconds. */
export const SLOW_STAGE_WARNING_INTERVAL_MS = 5000;

const ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
const NAME = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$/;

/** Thrown when text that is not id- or name-shaped is offered to a diagnostic record. */
export class DiagnosticValueError extends Error {
  constructor(kind: string, length: number) {
    // Never echo the value: it may be a body.
    super(`diagnostic ${kind} must be identifier-shaped and at most ${DIAGNOSTIC_TOKEN_MAX_LENGTH} characters (got ${length} characters)`);
    this.name = "DiagnosticValueError";
  }
}

/** Mints a diagnostic id from a number or identifier-shaped text; throws on anything else. */
export function diagnosticId(value: string | number): DiagnosticId {
  const s = typeof value === "number" ? String(value) : value;
  if (s.length > DIAGNOSTIC_TOKEN_MAX_LENGTH || !ID.test(s)) throw new DiagnosticValueError("id", s.length);
  return s as DiagnosticId;
}

/** Mints a diagnostic event/stage name (`a.b_c`); throws on anything else. */
export function diagnosticName(value: string): DiagnosticName {
  if (value.length > DIAGNOSTIC_TOKEN_MAX_LENGTH || !NAME.test(value)) throw new DiagnosticValueError("name", value.length);
  return value as DiagnosticName;
}

/** Frontend components that own stages; each has its own warning budget. */
export const FRONTEND_COMPONENTS = ["socket_reader", "render_queue", "renderer", "transcript", "prompt_editor", "status_line", "tool_rows"] as const;
export type FrontendComponent = (typeof FRONTEND_COMPONENTS)[number];

interface StageFields {
  readonly component: FrontendComponent;
  readonly stage: DiagnosticName;
  readonly deliveryId?: DiagnosticId;
}

export type DiagnosticRecord =
  | (StageFields & { readonly kind: "stage_begin"; readonly level: "trace"; readonly at: number })
  | (StageFields & { readonly kind: "stage_end"; readonly level: "trace"; readonly at: number; readonly durationMs: number })
  | (StageFields & {
      readonly kind: "stage_slow";
      readonly level: "warn";
      readonly at: number;
      readonly durationMs: number;
      /** Slow stages of this component not warned about since the previous warning. */
      readonly suppressed: number;
    })
  | {
      readonly kind: "queue";
      readonly level: "trace";
      readonly at: number;
      readonly component: FrontendComponent;
      readonly items: number;
      readonly bytes: number;
      readonly oldestAgeMs: number;
      readonly refused: number;
    }
  | {
      readonly kind: "delivery";
      readonly level: "trace";
      readonly at: number;
      readonly deliveryId: DiagnosticId;
      readonly event: DiagnosticName;
      readonly agentId?: DiagnosticId;
      readonly selected: boolean;
      readonly bytes: number;
      readonly blocks: number;
    }
  | {
      readonly kind: "cancel_target";
      readonly level: "trace";
      readonly at: number;
      readonly agentId?: DiagnosticId;
      readonly resolution: "resolved" | "none" | "ambiguous";
    };

/** Keys of `T` whose type admits an arbitrary string (a body could hide there). */
type PlainStringKeys<T> = { [K in keyof T]-?: string extends NonNullable<T[K]> ? K : never }[keyof T];
type Violations = DiagnosticRecord extends infer R ? (R extends unknown ? PlainStringKeys<R> : never) : never;
/** Compile-time proof that no record field is a plain `string`: this fails to type-check otherwise. */
export const DIAGNOSTIC_RECORDS_HOLD_NO_BODIES: [Violations] extends [never] ? true : never = true;

export interface DiagnosticsOptions {
  /** Receives every record (trace and warn). */
  readonly sink: (record: DiagnosticRecord) => void;
  /** Milliseconds clock (default `performance.now`); injected in tests. */
  readonly clock?: () => number;
  /** Emit trace-level records (stage markers, snapshots); warnings are always emitted. */
  readonly trace?: boolean;
}

/** A running stage; `end()` closes it once and returns its duration. */
export interface StageTimer {
  end(): number;
}

export class Diagnostics {
  private readonly sink: (record: DiagnosticRecord) => void;
  private readonly clock: () => number;
  private readonly trace: boolean;
  private readonly lastWarning = new Map<FrontendComponent, number>();
  private readonly suppressed = new Map<FrontendComponent, number>();

  constructor(options: DiagnosticsOptions) {
    this.sink = options.sink;
    this.clock = options.clock ?? (() => performance.now());
    this.trace = options.trace ?? false;
  }

  /** Starts a stage, emitting the paired trace marker. */
  begin(component: FrontendComponent, stage: DiagnosticName, deliveryId?: DiagnosticId): StageTimer {
    const start = this.clock();
    if (this.trace) this.sink(withId({ kind: "stage_begin", level: "trace", at: start, component, stage }, deliveryId));
    let done = false;
    return {
      end: () => {
        const now = this.clock();
        const durationMs = now - start;
        if (done) return durationMs;
        done = true;
        if (this.trace) this.sink(withId({ kind: "stage_end", level: "trace", at: now, component, stage, durationMs }, deliveryId));
        this.completed(component, stage, durationMs, now, deliveryId);
        return durationMs;
      },
    };
  }

  /** Records a stage that completed after `durationMs` (now, by the clock). */
  stage(component: FrontendComponent, stage: DiagnosticName, durationMs: number, deliveryId?: DiagnosticId): void {
    this.completed(component, stage, durationMs, this.clock(), deliveryId);
  }

  /** A queue snapshot (trace level). */
  queue(component: FrontendComponent, snapshot: { items: number; bytes: number; oldestAgeMs: number; refused: number }): void {
    if (!this.trace) return;
    const { items, bytes, oldestAgeMs, refused } = snapshot;
    this.sink({ kind: "queue", level: "trace", at: this.clock(), component, items, bytes, oldestAgeMs, refused });
  }

  /** One delivered event: its id, typed name, routing agent, classification and sizes (trace level). */
  delivery(fields: { deliveryId: DiagnosticId; event: DiagnosticName; agentId?: DiagnosticId; selected: boolean; bytes: number; blocks: number }): void {
    if (!this.trace) return;
    const { deliveryId, event, agentId, selected, bytes, blocks } = fields;
    const base = { kind: "delivery", level: "trace", at: this.clock(), deliveryId, event, selected, bytes, blocks } as const;
    this.sink(agentId === undefined ? base : { ...base, agentId });
  }

  /** How a cancel request resolved its target (trace level). */
  cancelTarget(resolution: "resolved" | "none" | "ambiguous", agentId?: DiagnosticId): void {
    if (!this.trace) return;
    const base = { kind: "cancel_target", level: "trace", at: this.clock(), resolution } as const;
    this.sink(agentId === undefined ? base : { ...base, agentId });
  }

  private completed(component: FrontendComponent, stage: DiagnosticName, durationMs: number, now: number, deliveryId?: DiagnosticId): void {
    if (!(durationMs >= SLOW_STAGE_MS)) return;
    const last = this.lastWarning.get(component);
    if (last !== undefined && now - last < SLOW_STAGE_WARNING_INTERVAL_MS) {
      this.suppressed.set(component, (this.suppressed.get(component) ?? 0) + 1);
      return;
    }
    const suppressed = this.suppressed.get(component) ?? 0;
    this.lastWarning.set(component, now);
    this.suppressed.set(component, 0);
    this.sink(withId({ kind: "stage_slow", level: "warn", at: now, component, stage, durationMs, suppressed }, deliveryId));
  }
}

function withId<T extends object>(record: T, deliveryId: DiagnosticId | undefined): T | (T & { deliveryId: DiagnosticId }) {
  return deliveryId === undefined ? record : { ...record, deliveryId };
}
