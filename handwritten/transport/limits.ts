// Transport and runtime-discovery bounds, named once (SPEC-runtime-discovery).

/** Most frames a connection holds for sending (queued plus handed to the stream, not yet flushed). */
export const MAX_QUEUE_ITEMS = 1024;

/** Most bytes a connection holds for sending, counted the same way as `MAX_QUEUE_ITEMS`. */
export const MAX_QUEUE_BYTES = 64 * 1024 * 1024;

/** Most `sendAsync` callers that may wait for room on one connection; more get `"full"`. */
export const MAX_SEND_WAITERS = 1024;

/** After a local or protocol close, queued frames get this long to flush before the stream is destroyed. */
export const CLOSE_GRACE_MS = 2_000;

/**
 * Most simultaneous connections one unix socket server accepts at all: a backstop above the
 * daemon's per-class limits (SPEC-daemon-peers), which decide who is let in.
 */
export const MAX_SOCKET_CONNECTIONS = 512;

/** Bytes of partially received frames all connections of one socket server may hold together. */
export const MAX_INBOUND_PARTIAL_BYTES = 256 * 1024 * 1024;

/** A frame a socket peer has begun must be complete within this long. */
export const FRAME_DEADLINE_MS = 15_000;

/** Longest socket path accepted (Linux `sun_path` holds 108 bytes with the NUL, macOS 104). */
export const MAX_SOCKET_PATH_BYTES = process.platform === "linux" ? 107 : 103;

/** Most raw directory entries one runtime scan reads. */
export const SCAN_MAX_ENTRIES = 4096;

/** Most socket candidates one runtime scan returns (and so most probes one listing starts). */
export const SCAN_MAX_CANDIDATES = 256;

/** Total time one runtime scan may take; it returns what it found so far, marked truncated. */
export const SCAN_TIME_BUDGET_MS = 2_000;

/** Largest discovery metadata file read; a larger one is reported `too_large` and never parsed. */
export const METADATA_MAX_BYTES = 4096;

/** Default deadline of one probe, from connect to the correlated answer. */
export const PROBE_DEADLINE_MS = 1_500;

/** Default deadline of a plain client connect. */
export const CONNECT_TIMEOUT_MS = 1_500;

/** Runtime directory and file modes. */
export const RUNTIME_DIR_MODE = 0o700;
export const SOCKET_MODE = 0o600;
export const METADATA_MODE = 0o600;

/** Environment variable a launcher uses to hand its minted instance value to the daemon it starts. */
export const DAEMON_INSTANCE_ENV = "TAU_DAEMON_INSTANCE";
