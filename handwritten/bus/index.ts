// The publication pipeline: admission, interception, commit, broadcast, replay (SPEC-event-publication).
export { admit, judge, publisherFromClass, tableClassOf } from "./admission.js";
export type { AdmissionResult, Judgement, PublisherIdentity, UnjudgedEvent } from "./admission.js";
export { Bus, nowMicros } from "./bus.js";
export type {
  BusOptions,
  Committed,
  Consumer,
  Delivery,
  DurableAppend,
  Event,
  EventInput,
  PeerEventInput,
  HistoricalRecord,
  HistoryReader,
  HistorySource,
  InterceptAction,
  InterceptorSpec,
  PublishOutcome,
  PublisherEnvelope,
  Sink,
} from "./bus.js";
export { MemorySink } from "./memory-sink.js";
export { selectorMatches, selectorKind } from "./selectors.js";
export { INTERCEPT_DEADLINE_MS, PIPELINE_QUEUE_ITEMS, SUBSCRIBER_HIGH_WATER_ITEMS, SUBSCRIBER_QUEUE_BYTES, SUBSCRIBER_QUEUE_ITEMS } from "./limits.js";
