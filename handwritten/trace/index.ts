// Offline trace export of agent journals: read-only, snapshot-consistent (SPEC-trace-export).
export { TraceError, captureAgentJournal, closeSnapshot, type JournalSnapshot } from "./snapshot.js";
export { resolveAgent, resolveId, resolveSession, sessionAgents } from "./resolve.js";
export { LITE_TEXT_BYTES, PerfProjection, compactLine, jsonLine, nativeLine, nativeValue, utf8Prefix } from "./project.js";
export { TRACE_FORMATS, agentJournalSemantics, copyStaging, exportTrace, openStaging, stageTrace, type TraceFormat, type TraceOptions, type TraceReport } from "./export.js";
export { formatStats, latestSession, sessionStats, type ModelTokens, type SessionStats } from "./stats.js";
// A journal the store refuses (corrupt, locked, invalid) reaches a trace's caller as the store's own
// error: one surface for `tau agent trace` to catch.
export { StoreError } from "../store/index.js";
