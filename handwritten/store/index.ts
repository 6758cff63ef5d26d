// Public surface of tau's durable storage layer. Rules: records/SPEC-journal-storage.md.
export { MAX_RECORD_BYTES, FRAME_HEADER_BYTES } from "./limits.js";
export * as limits from "./limits.js";
export {
  StoreError,
  JournalCorruptError,
  JournalLockedError,
  JournalPoisonedError,
  RecordInvalidError,
  RecordTooLargeError,
  type StoreErrorCode,
} from "./errors.js";
export { nodeIo, readFully, type JournalIo } from "./io.js";
export { encodeFrame, decodePayload } from "./codec.js";
export {
  validateJournalRecord,
  validatePromptHistoryRecord,
  isValidId,
  type ValidationResult,
  type RecordValidator,
  type SemanticValidator,
  type JournalRecord,
  type PromptHistoryRecord,
} from "./validate.js";
export { acquireJournalLock, liveJournalWriter, type LockHandle } from "./lock.js";
export {
  FileJournal,
  MemoryJournal,
  replayJournal,
  scanFrames,
  type Journal,
  type SeqRecord,
  type RecordPipeline,
  type FileJournalOptions,
  type OpenReport,
  type ReplayOptions,
  type ReplayResult,
  type ScanBudget,
  type ScanResult,
  type ScanStart,
  type TornTail,
} from "./journal.js";
export { checkpointPath } from "./paths.js";
export {
  EventLog,
  journalPath,
  type Resumed,
  nowMicros,
  openFileStateStore,
  openMemoryStateStore,
  type AppendInput,
  type FileStoreOptions,
  type JournalHooks,
  type JournalKind,
  type StateStore,
} from "./stores.js";
export {
  DEFAULT_REPAIR_BUDGET,
  boundCheckpoint,
  eventsPath,
  inspectAgent,
  invalidateCheckpoint,
  listAgents,
  metaPath,
  readCheckpointFile,
  writeCheckpoint,
  writeJournalCheckpoint,
  type AgentListing,
  type AgentStatus,
  type Checkpoint,
  type CheckpointPaths,
  type InspectOptions,
  type RepairBudget,
} from "./checkpoint.js";
export {
  WritebackWorker,
  nodeSync,
  retryDelayMs,
  type SyncFn,
  type SyncTarget,
  type WritebackOptions,
  type WritebackStats,
} from "./writeback.js";
export {
  PromptHistory,
  openPromptHistory,
  promptHistoryPath,
  type FullReadReason,
  type PromptHistoryOptions,
  type PromptInput,
  type RefreshReport,
} from "./prompt-history.js";
export {
  DEBUG_LOG_FILE,
  DebugLogWriter,
  REDACTED,
  SECRET_KEY_PATTERN,
  cleanupDebugLogs,
  debugLog,
  debugLogPath,
  formatDebugLine,
  mirrorDebugEvent,
  nodeDebugLogIo,
  redact,
  setDebugRedactor,
  type DebugCleanupOptions,
  type DebugCleanupReport,
  type DebugLogIo,
  type DebugLogStats,
  type DebugLogWriterOptions,
  type Redactor,
} from "./debug-log.js";
