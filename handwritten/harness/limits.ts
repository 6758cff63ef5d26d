// Bounds of the harness's own work (SPEC-journal-storage, SPEC-daemon-peers), named once.

/**
 * An agent's checkpoint is rewritten at its creation record and at the end of every turn; within a
 * turn, at the end of a round once this much was appended since the last.
 */
export const CHECKPOINT_EVERY_BYTES = 1024 * 1024;

/** Most records one `ui_history_request` answer carries. */
export const HISTORY_PAGE_MAX_EVENTS = 1000;

/** About the most journal bytes one `ui_history_request` answer carries (it must fit one frame). */
export const HISTORY_PAGE_BYTES = 4 * 1024 * 1024;

/**
 * Chosen: a windowed replay (`subscribe.recent`) reads at most about this many bytes of each
 * journal's most recent frames (at least its newest record), whatever its record count: an attach
 * costs the same at 1 and 100 MiB of history, and older records come a page at a time.
 */
export const REPLAY_WINDOW_BYTES = 2 * 1024 * 1024;

/**
 * Chosen: the restore stream is rewritten with only its open calls' records once it grows past this
 * and past twice what its last rewrite kept (SPEC-journal-storage, "The restore stream").
 */
export const RESTORE_STREAM_COMPACT_BYTES = 1024 * 1024;

/** Records a history reader takes from a journal per read while it merges the journals. */
export const HISTORY_READ_BYTES = 64 * 1024;
