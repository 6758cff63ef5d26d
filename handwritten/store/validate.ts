// Record validation is a parameter of the journal: the generated validators (from spec/journal.tsp)
// plug in here. This module holds tau's own structural validators so the store works and is tested
// before codegen exists; they mirror the TypeSpec models field by field.

export type ValidationResult = { ok: true } | { ok: false; reason: string };
/** Structural (schema) check of one decoded record. */
export type RecordValidator = (value: unknown) => ValidationResult;
/**
 * Semantic check of a structurally valid record against the caller's folded state. It is called
 * once per record in journal order, before the record is accepted (on scan and on append).
 */
export type SemanticValidator<R> = (record: R) => ValidationResult;

export const OK: ValidationResult = Object.freeze({ ok: true }) as ValidationResult;
const fail = (reason: string): ValidationResult => ({ ok: false, reason });

const ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const EVENT_NAME = /^[a-z][a-z0-9_]{0,31}\.[a-z][a-z0-9_]{0,63}$/;
const INSTANCE = /^[a-z][a-z0-9_-]{0,63}$/;
const PEER_CLASSES = new Set(["harness", "extension", "ui_attached", "ui_embedded", "socket_other", "peer_external"]);
const KINDS = new Set(["tool", "core", "provider", "action"]);
const BODY_MAX = 8388608;
const PATH_MAX = 4096;

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}
const isUint = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

function onlyKeys(o: Record<string, unknown>, allowed: readonly string[], where: string): ValidationResult {
  for (const k of Object.keys(o)) if (!allowed.includes(k)) return fail(`${where}: unexpected field "${k}"`);
  return OK;
}

export function isValidId(id: string): boolean {
  return ID.test(id);
}

/** Mirrors Tau.Journal.JournalRecord. */
export const validateJournalRecord: RecordValidator = (v) => {
  if (!isPlainObject(v)) return fail("record is not a map");
  const keys = onlyKeys(v, ["seq", "event", "parent", "source", "recorded_at"], "record");
  if (!keys.ok) return keys;
  if (!isUint(v.seq)) return fail("seq must be a non-negative integer");
  const ev = v.event;
  if (!isPlainObject(ev)) return fail("event must be a map");
  const evKeys = onlyKeys(ev, ["name", "data"], "event");
  if (!evKeys.ok) return evKeys;
  if (typeof ev.name !== "string" || !EVENT_NAME.test(ev.name)) return fail("event.name must be <family>.<call>");
  if (!isPlainObject(ev.data)) return fail("event.data must be a map");
  if (v.parent !== null && !isUint(v.parent)) return fail("parent must be null or a non-negative integer");
  if (v.parent !== null && (v.parent as number) >= (v.seq as number)) return fail("parent must precede seq");
  const src = v.source;
  if (!isPlainObject(src)) return fail("source must be a map");
  const srcKeys = onlyKeys(src, ["class", "instance", "kind"], "source");
  if (!srcKeys.ok) return srcKeys;
  if (typeof src.class !== "string" || !PEER_CLASSES.has(src.class)) return fail("source.class is not a peer class");
  if (src.instance !== undefined && (typeof src.instance !== "string" || !INSTANCE.test(src.instance)))
    return fail("source.instance is not an instance name");
  if (src.kind !== undefined && (typeof src.kind !== "string" || !KINDS.has(src.kind)))
    return fail("source.kind is not an extension kind");
  if (!isUint(v.recorded_at)) return fail("recorded_at must be non-negative microseconds");
  return OK;
};

/** Mirrors Tau.Journal.PromptHistoryRecord. */
export const validatePromptHistoryRecord: RecordValidator = (v) => {
  if (!isPlainObject(v)) return fail("record is not a map");
  const keys = onlyKeys(v, ["seq", "text", "session_id", "cwd", "recorded_at"], "record");
  if (!keys.ok) return keys;
  if (!isUint(v.seq)) return fail("seq must be a non-negative integer");
  if (typeof v.text !== "string" || v.text.length > BODY_MAX) return fail("text must be bounded text");
  if (v.session_id !== undefined && (typeof v.session_id !== "string" || !ID.test(v.session_id)))
    return fail("session_id is not an id");
  if (v.cwd !== undefined && (typeof v.cwd !== "string" || v.cwd.length > PATH_MAX)) return fail("cwd is not a path");
  if (!isUint(v.recorded_at)) return fail("recorded_at must be non-negative microseconds");
  return OK;
};

export interface JournalRecord {
  seq: number;
  event: { name: string; data: Record<string, unknown> };
  parent: number | null;
  source: { class: string; instance?: string; kind?: string };
  recorded_at: number;
}

export interface PromptHistoryRecord {
  seq: number;
  text: string;
  session_id?: string;
  cwd?: string;
  recorded_at: number;
}
