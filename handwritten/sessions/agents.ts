// A saved session's agents for people (`tau agent list`): each from its journal's checkpoint (one
// small file per agent, never a journal scan), as the session listing reads summaries.
import * as fs from "node:fs";
import * as path from "node:path";
import { readCheckpointFile } from "../store/index.js";

export interface AgentRow {
  readonly id: string;
  readonly name?: string;
  /** Who started it: `ui` (a person), `agent` (another agent), … as its `agent.started` says. */
  readonly creator?: string;
  readonly parent?: string;
  /** How its last prompt ended (`completed`, `failed`, `cancelled`, …). */
  readonly last_outcome?: string;
  readonly input_tokens: number;
  readonly output_tokens: number;
  /** Milliseconds since the epoch: its journal's last change. */
  readonly last_active: number;
}

interface AgentFoldView {
  metadata?: { display_name?: unknown };
  creator?: unknown;
  parent_id?: unknown;
  last_outcome?: unknown;
  usage?: { input_tokens?: unknown; output_tokens?: unknown };
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** The rows of `agents` that have a journal, the most recently active first. */
export function agentRows(stateDir: string, agents: readonly string[]): AgentRow[] {
  const rows: AgentRow[] = [];
  for (const id of agents) {
    const dir = path.join(stateDir, "agents", id);
    let last: number;
    try {
      last = fs.statSync(path.join(dir, "events.cbor")).mtimeMs;
    } catch {
      continue;
    }
    const fold = (readCheckpointFile(path.join(dir, "meta.json"))?.fold ?? {}) as AgentFoldView;
    const name = str(fold.metadata?.display_name);
    const creator = str(fold.creator);
    const parent = str(fold.parent_id);
    const outcome = str(fold.last_outcome);
    rows.push({
      id,
      ...(name !== undefined ? { name } : {}),
      ...(creator !== undefined ? { creator } : {}),
      ...(parent !== undefined ? { parent } : {}),
      ...(outcome !== undefined ? { last_outcome: outcome } : {}),
      input_tokens: num(fold.usage?.input_tokens),
      output_tokens: num(fold.usage?.output_tokens),
      last_active: last,
    });
  }
  return rows.sort((a, b) => b.last_active - a.last_active || (a.id < b.id ? -1 : 1));
}
