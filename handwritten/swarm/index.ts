// Tau Swarm 0.2.0 (SPEC-swarm): what the worker extension and `tau swarm` share — the framing and
// the lazily loaded Iroh binding.
export { FrameReader, SWARM_ALPN, SWARM_MAX_FRAME_BYTES, SWARM_VERSION, SwarmFrameError, SwarmInvalidFrame, checkFrame, encodeFrame, writeFrame } from "./frames.js";
export { ENDPOINT_KEY, bindEndpoint, endpointIdHex, endpointIdOfKey, generateKey, hexBytes, keyProblem, loadIroh, type BindOptions, type Iroh, type IrohConnection, type IrohEndpoint, type IrohRecvStream, type IrohSendStream } from "./iroh.js";
export { SwarmCoordinator, firstLine, type AdmittedWorker } from "./coordinator.js";
