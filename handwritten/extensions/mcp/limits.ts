// The bounds of the MCP client (SPEC-mcp, "Bounds"): one place, named.

/** Bytes (UTF-8) of one tool result the model receives; a larger result is cut with a note saying so. */
export const MCP_MAX_RESULT_BYTES = 64 * 1024;
/**
 * Bytes of one message read from a stdio server; a larger one ends the connection (the call fails,
 * the server is restarted), so a runaway server cannot make this process allocate without end.
 */
export const MCP_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Characters of a tool description offered to the model (the harness's own bound). */
export const MCP_MAX_DESCRIPTION_CHARS = 16_384;
/** Bytes of one argument schema (the harness's own bound, MAX_TOOL_PARAMETERS_BYTES). */
export const MCP_MAX_SCHEMA_BYTES = 64 * 1024;
/** Tools one server may offer (the harness's per-instance bound). */
export const MCP_MAX_TOOLS = 256;
/** Characters of a tool's name once prefixed (`mcp__SERVER__TOOL`): the harness's tool-name bound. */
export const MCP_MAX_TOOL_NAME_CHARS = 64;
/** Restart backoff after a crash: first delay, doubling up to the cap. */
export const MCP_RESTART_FIRST_MS = 500;
export const MCP_RESTART_MAX_MS = 30_000;
/** Starts in a row that may fail (a crash soon after a start counts) before the server is left failed. */
export const MCP_MAX_FAILURES_IN_A_ROW = 6;
/** At the session's end a stdio server gets SIGTERM at once and SIGKILL this much later (the harness gives the extension 1 s). */
export const MCP_STOP_KILL_AFTER_MS = 500;
/** A server that stayed up this long has its backoff reset. */
export const MCP_RESTART_RESET_AFTER_MS = 60_000;
/** The longest timer Node keeps; a longer configured timeout means no timeout at all. */
export const MAX_TIMER_MS = 2_147_483_647;
/** Characters of a server's last stderr lines kept for its last error. */
export const MCP_STDERR_TAIL_CHARS = 2_048;
/** Characters of one error message shown to the user or the model. */
export const MCP_MAX_ERROR_CHARS = 1_024;
/**
 * Reconnection of a dropped SSE stream of a Streamable HTTP server (resumed with `Last-Event-ID`):
 * the first delay (unless the server asks for its own), growing by the factor up to the cap, and the
 * attempts made before the call fails.
 */
export const MCP_SSE_RECONNECTION = { initialReconnectionDelay: 250, reconnectionDelayGrowFactor: 2, maxReconnectionDelay: 10_000, maxRetries: 5 } as const;
/** Longest `tau mcp login` waits for the browser's redirect. */
export const MCP_LOGIN_MAX_MS = 10 * 60_000;
/** Messages of one sampling request tau takes (SPEC-mcp, "Sampling"). */
export const MCP_SAMPLING_MAX_MESSAGES = 64;
/** Characters of one sampling message's text, and of its system prompt. */
export const MCP_SAMPLING_MAX_TEXT_CHARS = 65_536;
