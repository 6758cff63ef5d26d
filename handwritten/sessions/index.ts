// Saved sessions: the summary the harness keeps in a session journal's checkpoint, and the
// catalog that lists saved sessions from those summaries and removes them under their locks.
export { TITLE_MAX_CHARS, SessionSummaryFold, parseSessionSummary, titleFromPrompt, type SessionSummary } from "./summary.js";
export { MAX_LISTED_SESSIONS, SessionCatalogError, agentToContinue, describeSession, listSavedSessions, removeSavedSession, resolveSavedSession, type SavedSession } from "./catalog.js";
export { ageLabel, formatAge, formatBytes } from "./format.js";
export { agentRows, type AgentRow } from "./agents.js";
