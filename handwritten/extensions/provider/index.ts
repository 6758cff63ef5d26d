// Public surface of the OpenAI-compatible provider wire client (SPEC-provider-chat-completions).
// The `tau ext provider` extension process wraps this library; protocol glue lives there.
export {
  HEADERS_TIMEOUT_MS,
  MAX_RESPONSE_CHARS,
  MAX_TOOL_CALLS,
  MAX_TOOL_NAME_CHARS,
  STREAM_IDLE_TIMEOUT_MS,
  buildChatCompletionBody,
  chatCompletionsUrl,
  mapUsage,
  reasoningReplayFor,
  streamChatCompletion,
} from "./chat-completions.js";
export type {
  ChatCompletionBody,
  ChatCompletionResult,
  Failed,
  Finished,
  OpenAiMessage,
  ProviderProfile,
  ReasoningReplayMode,
  RetryNotice,
  StreamChatCompletionOptions,
} from "./chat-completions.js";
export { MAX_REASONING_ITEMS, RESPONSES, buildResponsesBody, mapResponsesUsage, responsesUrl, streamResponses } from "./responses.js";
export type { ResponsesBody, ResponsesInputItem } from "./responses.js";
export { HTTP_SSE, endpointUrl, streamRound } from "./round.js";
export type { Attempt, RoundResult, RoundStream, StreamRoundOptions, Transport, WireFamily } from "./round.js";
// The chatgpt_ws family (chatgpt-ws.ts, ws-transport.ts, oauth.ts, quota.ts) is not re-exported
// here: it loads the `ws` package, which only its own profile should pay for (main.ts imports it
// for that profile alone).
export {
  EGRESS_CONNECT_TIMEOUT_MS,
  EgressConfigError,
  EgressProxyError,
  EgressRedirectError,
  EgressTimeoutError,
  bypassesProxy,
  createEgressPolicy,
  parseNoProxy,
  readProxySettings,
  selectProxy,
} from "./egress.js";
export type { EgressEnv, EgressOptions, EgressPolicy, EgressRequest, EgressResponse, NoProxyEntry, ProxySettings } from "./egress.js";
export {
  MAX_DIAGNOSTIC_CHARS,
  MAX_ERROR_BODY_BYTES,
  ProviderFailure,
  RETRYABLE_CLASSES,
  classifyHttp,
  classifyThrown,
  errorFields,
  sanitizeDiagnostic,
} from "./errors.js";
export type { HttpErrorFields } from "./errors.js";
export {
  DEFAULT_RETRY_POLICY,
  RETRY_AFTER_CAP_MS,
  RETRY_BASE_DELAY_MS,
  RETRY_MAX_ATTEMPTS,
  RETRY_MAX_DELAY_MS,
  backoffDelay,
  parseRetryAfter,
} from "./retry.js";
export type { RetryPolicy } from "./retry.js";
export { MAX_LISTED_MODELS, MAX_MODELS_BODY_BYTES, MODELS_TIMEOUT_MS, listModels, modelsUrl, parseModelListing } from "./models.js";
export type { ListModelsOptions } from "./models.js";
export { MODEL_LISTING_TTL_MS, listingCacheDir, listingCacheFile, readCachedListing, writeCachedListing } from "./listing-cache.js";
export { FALLBACK_MODEL, declaredModels } from "./declared-models.js";
export type { ModelListingResult } from "./declared-models.js";
export { SSE_MAX_EVENT_BYTES, SSE_MAX_LINE_BYTES, SseError, SseParser } from "./sse.js";
export type { SseErrorCode, SseEvent, SseParserOptions } from "./sse.js";
export {
  CASSETTE_FORMAT,
  CassetteError,
  SENSITIVE_HEADERS,
  cassetteReplay,
  loadCassette,
  parseCassette,
  recordCassette,
  summarizeRequest,
} from "./cassette.js";
export type { Cassette, CassetteChunk, CassetteRequestSummary, ReplayResponse } from "./cassette.js";
