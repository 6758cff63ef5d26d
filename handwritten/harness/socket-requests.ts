// The requests socket peers send the daemon (SPEC-daemon-peers), one `serve` per request spec/
// declares (`x-tau-request`): who may send each is the declaration's `callers`, and the
// RequestServer (protocol/requests.ts) refuses anyone else, checks the payload and sends exactly one
// answer or refusal. Nothing here is published or journaled.
import { REQUESTS } from "../../generated/index.js";
import { refusal, type RequestServer } from "../protocol/index.js";
import { clientRequests, type SessionInfo } from "../transport/index.js";
import type { PublisherEnvelope } from "../bus/index.js";
import type { Harness } from "./harness.js";

/** What the daemon knows of a connection, and what its requests change. */
export type PeerState =
  | { readonly kind: "new" }
  | { readonly kind: "ui"; readonly generation: number; readonly publisher: PublisherEnvelope; detached: boolean; subscriptions: number[] }
  | { readonly kind: "client"; readonly generation: number }
  | { readonly kind: "peer"; readonly generation: number; inFlight: number };

/** Peer messages one peer connection may have waiting for their answer. */
export const MAX_PEER_IN_FLIGHT = 16;

export interface SocketRequestsPolicy {
  readonly sessionInfo: () => SessionInfo;
  /** An attached UI asked to end the session for everyone (`ui_session_end_request`). */
  readonly onEndRequested?: () => void;
}

/** The daemon's answers to its socket peers' requests. */
export function socketRequests(harness: Harness, policy: SocketRequestsPolicy): RequestServer<PeerState> {
  return (
    clientRequests<PeerState>(policy.sessionInfo, (line) => process.stderr.write(`tau daemon: ${line}\n`))
      // An attached UI that detaches leaves an owned daemon running when it goes (SPEC-daemon-peers).
      .serve(REQUESTS.ui_detach_request, (_, peer) => {
        if (peer.kind === "ui") peer.detached = true;
      })
      .serve(REQUESTS.ui_session_end_request, () => policy.onEndRequested?.())
      // A bounded page of the session's agents (SPEC-agent-team, "Roster").
      .serve(REQUESTS.ui_roster_request, ({ include_unloaded, cursor, limit }) =>
        harness.rosterPage({ includeUnloaded: include_unloaded, ...(cursor !== undefined ? { cursor } : {}), ...(limit !== undefined ? { limit } : {}) }),
      )
      // UI control state, held in memory only (SPEC-agent-navigation).
      .serve(REQUESTS.ui_navigation_request, ({ agent_id, mode }) => {
        const now = harness.navigation.request(agent_id, mode);
        if (now === undefined) throw refusal(REQUESTS.ui_navigation_request, "invalid");
        return { agent_id, mode: now };
      })
      .serve(REQUESTS.ui_tree_request, () => ({ level: "info" as const, text: tree(harness) }))
      .serve(REQUESTS.ui_mcp_request, () => ({ level: "info" as const, text: mcpServers(harness) }))
      .serve(
        REQUESTS.ui_history_request,
        ({ agent_id, before, limit }) => {
          const page = harness.historyPage(agent_id, before, limit);
          if (!page) throw refusal(REQUESTS.ui_history_request, "invalid");
          const records = page.records.map((r) => ({ event: r.event, seq: r.seq, recorded_at: r.recorded_at }));
          return { agent_id, first: page.first, total: page.total, records };
        },
        // A page of up to about 4 MiB waits for room rather than being refused.
        { wait: true },
      )
      // An extension's colon command, raw to its owning instance only; nothing is published (SPEC-extension-commands).
      .serve(REQUESTS.ui_extension_command_request, ({ name, args }) => harness.extensionCommands.invoke(name, args))
      .serve(REQUESTS.ui_debug_event_stats_request, () => ({ level: "info" as const, text: extensionStats(harness) }))
      // Peer messaging (SPEC-peer-messaging): a bounded number waiting per connection.
      .serve(REQUESTS.peer_message_request, async (message, peer) => {
        if (peer.kind !== "peer") throw new Error("not a peer connection");
        if (peer.inFlight >= MAX_PEER_IN_FLIGHT) return { status: "refused" as const, reason: `at most ${MAX_PEER_IN_FLIGHT} messages may wait for their answer on one connection` };
        peer.inFlight++;
        try {
          return await harness.peerInbox.receive(message);
        } finally {
          peer.inFlight--;
        }
      })
      .serve(REQUESTS.peer_agents_request, () => ({ session_id: harness.sessionId, agents: harness.peerInbox.agents() }))
  );
}

/** One line per configured extension: its protocol counters, never a payload. */
function extensionStats(harness: Harness): string {
  const rows = harness.extensions.counters();
  if (rows.length === 0) return "(no configured extensions)";
  return rows
    .map(
      (r) =>
        `${r.instance} (${r.kind}, ${r.phase}, generation ${r.generation}, ${r.restarts} restarts): ${r.messages} messages, ` +
        `${r.published} published, ${r.refused} refused, ${r.staged} staged, ${r.notices} notices, ${r.invalid} unreadable`,
    )
    .join("\n");
}

/** Longest `:mcp` answer: a notice's text bound. */
const MCP_VIEW_MAX_CHARS = 16_000;

/**
 * The session's MCP servers (`:mcp`, SPEC-mcp "State"): each one's state as its extension last
 * reported it (or the extension's own, when that is not running), its restarts and its tools.
 */
function mcpServers(harness: Harness): string {
  const rows = harness.extensions.counters().filter((r) => {
    const command = harness.extensions.configOf?.(r.instance)?.command ?? [];
    return command[0] === "tau" && command[1] === "ext" && command[2] === "mcp";
  });
  if (rows.length === 0) return "no MCP servers in this session (tau mcp add NAME -- COMMAND adds one; tau mcp list shows what a session here starts)";
  const tools = new Map<string, string[]>();
  for (const t of harness.tools.tools.values()) tools.set(t.owner, [...(tools.get(t.owner) ?? []), t.name]);
  const lines = [`MCP servers (${rows.length}):`];
  for (const r of rows) {
    const server = r.instance.replace(/^mcp-/, "");
    const prefix = `mcp server ${server}: `;
    const said = r.lastNotices.map((n) => (n.text.startsWith(prefix) ? n.text.slice(prefix.length) : n.text));
    // Its state is the last state it reported; what it said since (a tool it could not offer) follows.
    const at = said.findLastIndex((t) => /^(starting|ready|restarting|failed)\b/.test(t));
    const state = r.phase === "active" ? (said[at] ?? "starting") : `extension ${r.phase}${r.reason ? ` (${r.reason})` : ""}`;
    const since = said.slice(at + 1).slice(-3);
    const own = (tools.get(r.instance) ?? []).sort();
    const shown = own.length > 12 ? [...own.slice(0, 12), `… ${own.length - 12} more`] : own;
    lines.push(`  ${server}: ${state}${r.restarts > 0 ? `; ${r.restarts} restarts` : ""}`);
    for (const note of since) lines.push(`    said: ${note}`);
    lines.push(`    tools (${own.length}): ${own.length > 0 ? shown.join(", ") : "none yet"}`);
  }
  const text = lines.join("\n");
  return text.length > MCP_VIEW_MAX_CHARS ? `${text.slice(0, MCP_VIEW_MAX_CHARS - 1)}…` : text;
}

/** The session's agents as an indented tree, each under its parent. */
function tree(harness: Harness): string {
  const agents = [...harness.agents.values()];
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const a of agents.filter((x) => x.fold.parent_id === parent)) {
      lines.push(`${"  ".repeat(depth)}${a.id}`);
      walk(a.id, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.length > 0 ? lines.join("\n") : "(no agents)";
}
