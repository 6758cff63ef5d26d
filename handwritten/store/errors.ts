// Typed storage errors. Each carries a stable `code` so callers (and the CLI's exit-code mapping)
// branch on the kind, never on message text.

export type StoreErrorCode =
  | "journal_corrupt"
  | "journal_locked"
  | "journal_poisoned"
  | "journal_closed"
  | "record_too_large"
  | "record_invalid"
  | "bad_id";

export class StoreError extends Error {
  readonly code: StoreErrorCode;
  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreError";
    this.code = code;
  }
}

/** A complete frame failed decode, validation, seq continuity or the semantic hook. Nothing was changed. */
export class JournalCorruptError extends StoreError {
  readonly file: string;
  readonly offset: number;
  readonly reason: string;
  constructor(file: string, offset: number, reason: string, options?: { cause?: unknown }) {
    super("journal_corrupt", `${file}: corrupt frame at offset ${offset}: ${reason}`, options);
    this.name = "JournalCorruptError";
    this.file = file;
    this.offset = offset;
    this.reason = reason;
  }
}

/** Another live process (or this one) holds the writer lock. */
export class JournalLockedError extends StoreError {
  readonly file: string;
  readonly holderPid: number;
  constructor(file: string, holderPid: number) {
    super("journal_locked", `${file} is locked by live process pid ${holderPid}`);
    this.name = "JournalLockedError";
    this.file = file;
    this.holderPid = holderPid;
  }
}

/** A failed append could not be rolled back; `cause` is the failure to restore the end. */
export class JournalPoisonedError extends StoreError {
  readonly file: string;
  constructor(file: string, cause: unknown) {
    super("journal_poisoned", `${file} is poisoned: an earlier failed append could not be rolled back`, { cause });
    this.name = "JournalPoisonedError";
    this.file = file;
  }
}

export class RecordTooLargeError extends StoreError {
  readonly bytes: number;
  readonly limit: number;
  constructor(bytes: number, limit: number) {
    super("record_too_large", `record of ${bytes} bytes exceeds the ${limit}-byte frame cap`);
    this.name = "RecordTooLargeError";
    this.bytes = bytes;
    this.limit = limit;
  }
}

export class RecordInvalidError extends StoreError {
  readonly reason: string;
  constructor(reason: string) {
    super("record_invalid", `record rejected before writing: ${reason}`);
    this.name = "RecordInvalidError";
    this.reason = reason;
  }
}
