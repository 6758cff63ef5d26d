// Offline trace export of agent journals: read-only, snapshot-consistent (SPEC-trace-export).
export { TraceError, captureAgentJournal, closeSnapshot, type JournalSnapshot } from "./snapshot.js";
export { resolveAgent, resolveId, resolveSession, sessionAgents } from "./resolve.js";
export { LITE_TEXT_BYTES, PerfProjection, compactLine, compactRecord, jsonLine, jsonText, nativeLine, nativeValue, utf8Prefix, workflowLine, type AgentTotals } from "./project.js";
export { CREATION_RECORD_MAX_BYTES, MAX_TRACE_AGENTS, allAgents, creationOf, discoverWorkflow, readCreationRecord, type CreationRecord, type WorkflowAgent } from "./descendants.js";
export { OTLP_SPANS_PER_REQUEST, TRACE_FORMATS, agentJournalSemantics, copyStaging, exportTrace, loadFormatLibraries, openStaging, postTrace, stageTrace, type FormatLibraries, type TraceFormat, type TraceOptions, type TraceReport } from "./export.js";
export { roundCost, PriceTable, type ModelPrice, type PriceOf, type RoundCost } from "./cost.js";
export { GEN_AI, OtlpProjection, TAU_COST_USD, loadOtlp, providerName, type OtlpOrigin, type OtlpSerializers } from "./otlp.js";
export { loadToon, toonHeader, toonItem, type ToonLib } from "./toon.js";
export { OTLP_ATTEMPTS, OTLP_DEFAULT_TIMEOUT_MS, OTLP_MAX_RESPONSE_BYTES, networkFailure, otlpEndpoint, otlpPoster, type OtlpEndpoint, type PostOptions } from "./post.js";
export { formatStats, latestSession, sessionStats, type ModelTokens, type SessionStats } from "./stats.js";
// A journal the store refuses (corrupt, locked, invalid) reaches a trace's caller as the store's own
// error: one surface for `tau agent trace` to catch.
export { StoreError } from "../store/index.js";
