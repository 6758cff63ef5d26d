// The wire protocol: frames, plain CBOR, message validation and revisions (SPEC-wire-protocol).
export { FRAME_HEADER_BYTES, MAX_DEPTH, MAX_FRAME_BYTES, MAX_FRAME_ITEMS, REVISION } from "./limits.js";
export { WireError, type WireErrorCode } from "./errors.js";
export { cborIntegers, decodeCbor, encodeCbor } from "./cbor.js";
export { FrameReader, encodeFrame, type FrameResult } from "./frame.js";
export {
  MessageReader,
  agentIdOf,
  carriedDelivery,
  carriedEvent,
  checkedEvent,
  eventProblem,
  parseMessage,
  type Event,
  type EventDelivery,
  type ParseResult,
  type Side,
} from "./messages.js";
export { compareRevision, type RevisionVerdict } from "./revision.js";
export { SHORT_TEXT_MAX, fitText } from "./text.js";
export { SECRETS_FD_ENV, isSecretVariable, secretHandover, type SecretHandover } from "./secret-handover.js";
export { PROVIDER_MAX_PARTS, PROVIDER_PART_BYTES, PROVIDER_PART_ITEMS, PROVIDER_PART_MESSAGES, ProviderCallAssembler, splitProviderCall, type ProviderCall } from "./provider-request.js";
export {
  RequestError,
  RequestRefusal,
  RequestServer,
  answerEvent,
  mintRequestId,
  notify,
  reasonOf,
  refusal,
  request,
  requestKind,
  type AnswerChannel,
  type AnsweredRequestName,
  type EventRequestName,
  type MessageRequestName,
  type Named,
  type NotificationName,
  type RefusalOf,
  type RequestChannel,
  type RequestFailure,
  type RequestHandler,
  type RequestOptions,
  type RequestServerOptions,
} from "./requests.js";
