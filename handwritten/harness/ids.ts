// Identifiers tau mints (startup/ids.ts: saved-session forks mint them outside the harness too).
export { mintId } from "../startup/ids.js";
