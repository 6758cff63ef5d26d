// `tau daemon`'s flags, declared once (GATE-cli-declared-once): its parser (harness/daemon-start.ts),
// its `--help`, and the argument lists the processes that start a daemon build (cli/owned-daemon.ts,
// a handoff's replacement in harness/daemon-main.ts, `tau dev print-*`) are made from this table. In
// startup/ because both the CLI and the harness start daemons. Plain data: the daemon's first bundle
// holds it.
import type { FlagTable, FlagValues } from "./flags.js";

export const DAEMON_FLAGS = {
  "session-id": { type: "string", value: "ID", group: "session", description: "the new session's id (minted when absent)" },
  resume: { type: "string", value: "ID", group: "session", description: "restart the saved session ID from its journals" },
  ephemeral: { type: "boolean", description: "keep no session files" },
  "project-root": { type: "string", value: "DIR", description: "the project the session works in (default: the current folder)" },
  "exit-when-uis-leave": { type: "boolean", description: "stop when the last attached UI leaves" },
  detach: { type: "boolean", description: 'start in the background; print {"session_id","pid","socket"} and return' },
  "harness-config": { type: "string", multiple: true, value: "KEY=VALUE", description: "override one harness.yaml key (repeatable)" },
  print: { type: "string", options: ["system-prompt", "tools", "prompt"], hidden: true, description: "print what a session would send (tau dev print-*), store nothing, and exit" },
  "print-text": { type: "string", hidden: true, description: "the prompt text of --print prompt" },
  "handoff-seed": { type: "string", hidden: true, description: "start a handoff's replacement session from the seed its source wrote" },
  "mcp-servers-file": { type: "string", hidden: true, description: "MCP servers a client brought for this session (a 0600 JSON file, read once and removed)" },
} as const satisfies FlagTable;

export type DaemonFlagValues = FlagValues<typeof DAEMON_FLAGS>;
