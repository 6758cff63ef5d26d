// Transport: framed connections over sockets and stdio, the unix socket server and client, and
// non-destructive runtime discovery (SPEC-runtime-discovery).
export {
  CLOSE_GRACE_MS,
  CONNECT_TIMEOUT_MS,
  DAEMON_INSTANCE_ENV,
  MAX_QUEUE_BYTES,
  MAX_QUEUE_ITEMS,
  MAX_SEND_WAITERS,
  MAX_SOCKET_CONNECTIONS,
  MAX_SOCKET_PATH_BYTES,
  METADATA_MAX_BYTES,
  METADATA_MODE,
  PROBE_DEADLINE_MS,
  RUNTIME_DIR_MODE,
  SCAN_MAX_CANDIDATES,
  SCAN_MAX_ENTRIES,
  SCAN_TIME_BUDGET_MS,
  SOCKET_MODE,
} from "./limits.js";
export { ConnectError, ListenError, RuntimeDirError, type ConnectFailure, type RuntimeDirProblem } from "./errors.js";
export {
  Connection,
  InboundBudget,
  type ByteStream,
  type CloseReason,
  type ConnectionOptions,
  type QueueStats,
  type SendAsyncResult,
  type SendResult,
} from "./connection.js";
export { checkRuntimeDir, ensureRuntimeDir } from "./runtime-dir.js";
export { connectUnix, listenUnix, type ConnectOptions, type ConnectionTuning, type UnixServer, type UnixServerOptions } from "./unix.js";
export {
  InvalidInstanceError,
  MAX_STEM_PID,
  METADATA_SUFFIX,
  SOCKET_SUFFIX,
  formatStem,
  instanceEnv,
  instanceFromEnv,
  isValidInstance,
  mintInstance,
  pairPaths,
  parseStem,
  readPairMetadata,
  scanRuntime,
  writePairMetadata,
  type Candidate,
  type MetadataProblem,
  type MetadataRead,
  type PairMetadata,
  type PairPaths,
  type ScanOptions,
  type ScanResult,
  type ScanTruncation,
  type Stem,
} from "./discovery.js";
export { publishDaemonEndpoint, removeOwnPair, removeOwnPairOnExit, type DaemonEndpoint, type DaemonEndpointOptions } from "./pair.js";
export { clientRequests, codeForWireError, refuseContentFree, requestIdOf, serveClientPeer, type SessionInfo } from "./rpc.js";
export {
  PROBE_MAX_FRAME_BYTES,
  listSessions,
  probeSession,
  type ListOptions,
  type ProbeOptions,
  type ProbeOutcome,
  type SessionListing,
  type SessionRow,
} from "./probe.js";
export {
  LAUNCH_TIMEOUT_MS,
  DaemonExitedError,
  LaunchError,
  adoptDaemon,
  abandonDaemon,
  launchDaemon,
  selfCommand,
  startDaemon,
  waitForDaemon,
  type LaunchOptions,
  type LaunchedDaemon,
  type StartedDaemon,
} from "./launch.js";
export {
  PEER_ATTEMPT_DEADLINE_MS,
  PEER_MAX_FRAME_BYTES,
  PEER_RESEND_BACKOFF_MS,
  PEER_SEND_ATTEMPTS,
  PEER_TEXT_MAX_CHARS,
  askPeerAgents,
  sameUserBoundaryProblem,
  sendPeerMessage,
  type PeerAgents,
  type PeerDelivery,
  type PeerMessage,
  type PeerSendOptions,
} from "./peer-client.js";
