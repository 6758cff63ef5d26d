// Bounds of extension supervision (SPEC-extension-host).

/** Default and range of `startup_timeout_seconds`. */
export const DEFAULT_STARTUP_TIMEOUT_SECONDS = 2;
/** Emits an extension may stage before ready, and their total encoded bytes. */
export const MAX_STAGED_EMITS = 512;
export const MAX_STAGED_BYTES = 4 * 1024 * 1024;
/** Respawns allowed within the window before an extension is given up. */
export const RESPAWN_BUDGET = 5;
export const RESPAWN_WINDOW_MS = 60_000;
/** Back-off before respawn attempt n (1-based): base × 2^(n-1), capped. */
export const RESPAWN_BASE_DELAY_MS = 200;
export const RESPAWN_MAX_DELAY_MS = 10_000;
/** Longest spawn diagnostic field (instance, executable, cwd) after escaping. */
export const MAX_DIAGNOSTIC_FIELD = 200;
/** Grace between SIGTERM and SIGKILL when stopping an extension. */
export const STOP_GRACE_MS = 1_000;
/**
 * Largest size of a session's extensions.log (extensions' stderr). A line that would take it past the
 * bound first renames it to extensions.log.1, replacing the one before: at most twice this on disk.
 */
export const EXTENSIONS_LOG_MAX_BYTES = 8 * 1024 * 1024;

export function respawnDelay(attempt: number): number {
  return Math.min(RESPAWN_MAX_DELAY_MS, RESPAWN_BASE_DELAY_MS * 2 ** Math.max(0, attempt - 1));
}
