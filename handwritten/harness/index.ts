// The harness daemon's core: sessions, agents and the consumers that publish canonical facts.
export { Harness, HARNESS, type AgentState, type HarnessOptions } from "./harness.js";
export { ResumeError } from "./session-restore.js";
export { mintId } from "./ids.js";
export type { Peer } from "./peers.js";
export { CONSUMERS, ConsumerRegistry, type CommitHook, type ConsumerName, type DeclaredEvent } from "./consumers.js";
