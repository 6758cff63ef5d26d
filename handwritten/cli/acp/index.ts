// `tau acp` (SPEC-acp): the Agent Client Protocol server, its sessions, and how tau's events read as ACP updates.
export { ACP_PROMPT_MAX_CHARS, promptText, serveAcp, type AcpOptions } from "./server.js";
export { AcpRefusal, AcpSession, clientServers, type AskPermission } from "./session.js";
export { AcpTurn, replayedUpdates, type TurnEnd } from "./updates.js";
