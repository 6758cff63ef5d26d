// Every bound of the shell extension's tools, in one place (SPEC-shell-tools, DECISIONS rule 4).
// Tests exercise each one exactly at, one below and one above the bound.

// ---- shell -------------------------------------------------------------------------------------
/** Default `timeout_seconds` of a `shell` call. */
export const SHELL_DEFAULT_TIMEOUT_SECONDS = 120;
/** Smallest and largest accepted `timeout_seconds`. */
export const SHELL_MIN_TIMEOUT_SECONDS = 1;
export const SHELL_MAX_TIMEOUT_SECONDS = 3600;
/** Longest `command`, in characters (code points). */
export const SHELL_MAX_COMMAND_CHARS = 65_536;
/** Bytes of output kept from the start when the output is too long. */
export const SHELL_OUTPUT_HEAD_BYTES = 16 * 1024;
/** Bytes of output kept from the end when the output is too long. */
export const SHELL_OUTPUT_TAIL_BYTES = 48 * 1024;
/** After SIGTERM to the process group, how long before SIGKILL. */
export const SHELL_KILL_GRACE_MS = 2_000;
/**
 * When the extension's harness goes away, how long its commands' groups get between SIGTERM and
 * SIGKILL: inside the 1 s a stopping daemon gives the extension itself before its SIGKILL
 * (host STOP_GRACE_MS), so the groups' SIGKILL is never lost with the extension.
 */
export const SHELL_HARNESS_GONE_GRACE_MS = 500;
/** How often groups whose commands ended are checked, so one is forgotten soon after it empties. */
export const SHELL_GROUP_PRUNE_INTERVAL_MS = 1_000;
/** After the shell itself exits, how long to keep reading output that background processes hold open. */
export const SHELL_POST_EXIT_DRAIN_MS = 250;
/** Minimum interval between two progress callbacks. */
export const SHELL_PROGRESS_INTERVAL_MS = 250;
/** Longest progress text (the most recent output), in bytes. */
export const SHELL_PROGRESS_MAX_BYTES = 2 * 1024;

// ---- paths -------------------------------------------------------------------------------------
/** Longest path argument, in characters (code points). */
export const MAX_PATH_CHARS = 4096;

// ---- read --------------------------------------------------------------------------------------
/** Default and largest `limit` (lines) of one `read`. */
export const READ_MAX_LINES = 2000;
/** Largest `offset` accepted (1-based line number). */
export const READ_MAX_OFFSET = 100_000_000;
/** Characters (UTF-16 code units) of one line shown before it is cut. */
export const READ_MAX_LINE_CHARS = 2000;
/** Bytes of file content (line text, without number prefixes) returned by one `read`. */
export const READ_MAX_OUTPUT_BYTES = 64 * 1024;
/** Bytes at the start of a file inspected for a NUL byte (binary detection, all tools). */
export const BINARY_SNIFF_BYTES = 8 * 1024;

// ---- write / edit ------------------------------------------------------------------------------
/** Longest `content` of `write` and `old_text` / `new_text` of `edit`, in characters (code points). */
export const WRITE_MAX_CONTENT_CHARS = 4 * 1024 * 1024;
/** Largest file `edit` will open, in bytes. */
export const EDIT_MAX_FILE_BYTES = 8 * 1024 * 1024;
/** Most replacements in one `edit` call. */
export const EDIT_MAX_EDITS = 64;
/** Most line numbers listed when an `old_text` matches several times. */
export const EDIT_MAX_LISTED_MATCHES = 10;
/** Longest display diff, in characters; longer diffs are cut with a marker. */
export const DIFF_MAX_CHARS = 64 * 1024;
/** Time budget of the diff algorithm before the display diff is replaced by a note. */
export const DIFF_TIMEOUT_MS = 1_000;

// ---- grep / find / ls --------------------------------------------------------------------------
/** Longest `pattern` of `grep` and `find`, in characters (code points). */
export const MAX_PATTERN_CHARS = 1024;
/** Default and largest number of `grep` matches returned. */
export const GREP_MAX_MATCHES = 200;
/** Characters (UTF-16 code units) of one matching line shown before it is cut. */
export const GREP_MAX_LINE_CHARS = 500;
/** Files larger than this are skipped by `grep` (both engines), in bytes. */
export const GREP_MAX_FILE_BYTES = 8 * 1024 * 1024;
/** Default and largest number of `find` results. */
export const FIND_MAX_RESULTS = 1000;
/** Default and largest number of `ls` entries. */
export const LS_MAX_ENTRIES = 1000;
/** Directory names never entered by `grep` and `find` walks (an explicit root is still searched). */
export const SKIPPED_DIRECTORY_NAMES: readonly string[] = [".git", "node_modules"];
