// Every bound the storage layer chooses lives here, so the SPEC, the code and the boundary tests
// name one value. Bounds stated by the storage rules are marked "stated"; the rest are tau's
// conservative choices (DECISIONS ruling 4) and are recorded in SPEC-journal-storage.

/** Stated: one journal record's CBOR payload may be at most 64 MiB. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** Stated by the frame format: the little-endian length prefix is 8 bytes. */
export const FRAME_HEADER_BYTES = 8;

/** Chunk size used when scanning a journal; frames larger than this get their own buffer. */
export const SCAN_CHUNK_BYTES = 1024 * 1024;

/**
 * Chosen: a journal keeps the offset of every this-many-th frame (its checkpoint stores them too), and
 * finds the frames between two of them by reading headers: replay and history pages read backwards
 * from the end without an offset per frame in memory or a walk over the whole file.
 */
export const FRAME_ANCHOR_EVERY = 256;
/** Chosen: blocks of frame offsets (FRAME_ANCHOR_EVERY each) a journal keeps after reading them. */
export const FRAME_INDEX_CACHED_BLOCKS = 64;

/**
 * Chosen: journals of this process whose descriptor stays open at once. A journal not used for a
 * while gives its descriptor back (its writer lock stays held) and opens it again when next used,
 * so a session of a thousand idle agents holds no descriptor per agent (SPEC-journal-storage).
 */
export const MAX_OPEN_JOURNAL_DESCRIPTORS = 64;

/** Chosen: how many times takeover of a dead holder's lock is retried before giving up. */
export const LOCK_TAKEOVER_ATTEMPTS = 8;

/** Chosen: checkpoint repair may read at most this many journal bytes per checkpoint. */
export const CHECKPOINT_REPAIR_MAX_BYTES = 4 * 1024 * 1024;
/** Chosen: checkpoint repair may decode at most this many records per checkpoint. */
export const CHECKPOINT_REPAIR_MAX_RECORDS = 10_000;
/** Chosen: checkpoint repair may spend at most this long (ms) per checkpoint. */
export const CHECKPOINT_REPAIR_MAX_MS = 50;
/** Chosen: bytes before the boundary that the checkpoint witness hashes. */
export const CHECKPOINT_WITNESS_BYTES = 4096;
/** Chosen: a checkpoint file (with its folded state) larger than this is invalid without being parsed. */
export const CHECKPOINT_MAX_FILE_BYTES = 256 * 1024;

/** Chosen: writeback retry back-off starts here (ms) after the first failed sync ... */
export const WRITEBACK_RETRY_BASE_MS = 50;
/** Chosen: ... and doubles per consecutive failure up to this ceiling (ms); retries never stop. */
export const WRITEBACK_RETRY_MAX_MS = 5_000;

/** Chosen: prompt-history entries kept in memory per process (the newest; the file keeps all). */
export const PROMPT_HISTORY_MAX_ENTRIES = 1000;
/** Chosen: bytes immediately before the witnessed boundary that the prompt-history witness hashes. */
export const PROMPT_HISTORY_WITNESS_BYTES = 4096;
/** Chosen: how long an append waits in total for another UI's prompt-history lock (ms). */
export const PROMPT_HISTORY_LOCK_TIMEOUT_MS = 2_000;
/** Chosen: the longest single pause between prompt-history lock attempts (ms); pauses start at 1 ms. */
export const PROMPT_HISTORY_LOCK_POLL_MAX_MS = 16;

/** Stated: the debug mirror FIFO retains at most 1,024 lines ... */
export const DEBUG_FIFO_MAX_LINES = 1024;
/** Stated: ... and at most 64 MiB of line-plus-path bytes, in-flight work included. */
export const DEBUG_FIFO_MAX_BYTES = 64 * 1024 * 1024;
/** Chosen default for startup cleanup of unlocked debug logs (stated in the storage issue). */
export const DEBUG_LOG_RETENTION_MS = 14 * 24 * 60 * 60 * 1000;
/** Chosen: one serialised debug line (including its newline) is at most this many UTF-8 bytes. */
export const DEBUG_LOG_MAX_LINE_BYTES = 64 * 1024;
/** Chosen: default redaction truncates any string value longer than this many UTF-16 units. */
export const DEBUG_LOG_MAX_STRING_CHARS = 4096;
/** Chosen: default redaction replaces values nested deeper than this with a marker. */
export const DEBUG_LOG_MAX_DEPTH = 16;
/**
 * Work one default redaction may do, in about the characters its JSON would take: each value costs
 * 2, a string its length, a key its length plus 3. Past it the line could only become the over-long
 * summary anyway, so the walk stops and the rest of each open container is elided: a huge event costs
 * the mirror about what a full line does.
 */
export const DEBUG_LOG_REDACT_BUDGET = 64 * 1024;
