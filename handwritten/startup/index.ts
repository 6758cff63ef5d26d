// The start-up kit: what every tau process needs before anything heavy loads, and nothing else. The
// launch facts (roots, ids, the launcher's commands and secrets), the exit map, the start-up
// timeline, built-ins loaded on first use, random bytes without `crypto`, and the deferred CA
// certificates. Innermost with `protocol`: it imports only `generated/`, and every folder may import it.
export { builtin } from "./builtin.js";
export { EXIT_CODES, EXIT_OK, type ExitKind } from "./exit-codes.js";
export { DEFERRED_CA_CERTS_ENV, deferredCaCertsFile, forTauProcess } from "./extra-ca-certs.js";
export * from "./launch-facts.js";
export { randomHex } from "./random.js";
export { mark, markStart, timelineOn } from "./timeline.js";
