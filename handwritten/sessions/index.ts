// Saved sessions: the summary the harness keeps in a session journal's checkpoint, and the
// catalog that lists saved sessions from those summaries and removes them under their locks, and
// forks of them (one agent's conversation copied into a new session).
export { TITLE_MAX_CHARS, SessionSummaryFold, parseSessionSummary, titleFromPrompt, type SessionSummary } from "./summary.js";
export { MAX_LISTED_SESSIONS, SessionCatalogError, agentToContinue, describeSession, listSavedSessions, processAlive, removeSavedSession, resolveSavedSession, type SavedSession } from "./catalog.js";
export { ageLabel, formatAge, formatBytes } from "./format.js";
export { agentRows, type AgentRow } from "./agents.js";
export { FORKS_DIR, cleanInterruptedForks, forkSession, type ForkOptions, type Forked } from "./fork.js";
