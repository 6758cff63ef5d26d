// Bounds of the publication pipeline (SPEC-event-publication).

/** Items a subscriber's delivery queue may hold before the subscriber is cut off. */
export const SUBSCRIBER_QUEUE_ITEMS = 1024;

/**
 * A subscriber holding more than this many deliveries makes the pipeline yield to I/O between
 * publications, so its connection is written while it reads (a burst of commits runs in
 * microtasks otherwise, and a reader that keeps up would still reach the bound and be cut off).
 */
export const SUBSCRIBER_HIGH_WATER_ITEMS = 256;

/** Encoded bytes a subscriber's delivery queue may hold before the subscriber is cut off. */
export const SUBSCRIBER_QUEUE_BYTES = 64 * 1024 * 1024;

/** Publications waiting for the pipeline before new ones are refused as overloaded. */
export const PIPELINE_QUEUE_ITEMS = 65_536;

/**
 * How long one interceptor may take to answer one question. Past it the question counts as a pass
 * and the interceptor is suspended until its late reply arrives (SPEC-event-publication).
 */
export const INTERCEPT_DEADLINE_MS = 5_000;
