// The start-up kit: what every tau process needs before anything heavy loads, and nothing else. The
// launch facts (roots, ids, the launcher's commands and secrets), the declared flag tables (a
// command's flags, `tau daemon`'s), the exit map, the start-up
// timeline, built-ins loaded on first use, random bytes without `crypto` and the ids minted from them, and the deferred CA
// certificates. Innermost with `protocol`: it imports only `generated/`, and every folder may import it.
export { builtin } from "./builtin.js";
export { EXIT_CODES, EXIT_OK, type ExitKind } from "./exit-codes.js";
export { DEFERRED_CA_CERTS_ENV, deferredCaCertsFile, forTauProcess } from "./extra-ca-certs.js";
export * from "./launch-facts.js";
export { DAEMON_FLAGS, type DaemonFlagValues } from "./daemon-flags.js";
export { flagArgs, flagHelp, flagProblemText, parseArgsOptions, parseFlags, usageWords, type ArgSpec, type FlagProblem, type FlagSpec, type FlagTable, type FlagValues, type ParseArgsOptions, type ParsedFlags } from "./flags.js";
export { randomHex } from "./random.js";
export { mintId } from "./ids.js";
export { mark, markStart, timelineOn } from "./timeline.js";
