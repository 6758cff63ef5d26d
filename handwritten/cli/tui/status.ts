// The status line: the agent (name before id), the model it will use — from the start, before any
// prompt —, what the UI is doing, the MCP servers (mcp-status.ts), the context used, and the
// session's tokens and cost. Parts are
// dropped least useful first until the line fits; at 40 columns the state and model still show.
import type { AgentView, Transcript } from "./transcript.js";
import { escapeTitle } from "./agent-switcher.js";
import { agentLabel, columns, escapeLabel, sanitize, truncateEnd, truncateMiddle, type SafeText } from "../ui/index.js";

export interface StatusPart {
  readonly text: string;
  /** Lower goes first when the line is too narrow. */
  readonly keep: number;
  /** A shorter form tried before the part is dropped. */
  readonly short?: string;
}

/** 1234 → `1.2k`, 2_500_000 → `2.5M`: token counts in a few columns. */
export function compactCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(n < 10_000_000 ? 1 : 0)}M`;
}

/**
 * Why the session or the agent in view is not ready yet, when extensions hold it (SPEC-extension-
 * declarations, readiness): `waiting for gmail, notes to be ready…`; undefined when nothing waits.
 */
export function waitingFor(t: Pick<Transcript, "sessionInitialized" | "sessionWaitingFor">, agent: AgentView | undefined): string | undefined {
  const names = new Set([...(t.sessionInitialized ? [] : t.sessionWaitingFor), ...(agent?.initializing?.waitingFor ?? [])]);
  if (names.size === 0) return undefined;
  const shown = [...names].sort().slice(0, 3).map((n) => escapeLabel(n));
  return `waiting for ${shown.join(", ")}${names.size > 3 ? ` and ${names.size - 3} more` : ""} to be ready…`;
}

export function statusParts(s: { agent: AgentView | undefined; agents: readonly AgentView[]; defaultModel: string | undefined; state: string; mcp?: StatusPart | undefined }): StatusPart[] {
  const a = s.agent;
  const model = a?.model ?? s.defaultModel;
  // Usage of the session: every agent's.
  let input = 0;
  let output = 0;
  let cost = 0;
  for (const x of s.agents) {
    input += x.inputTokens;
    output += x.outputTokens;
    cost += x.costUsd;
  }
  const parts: StatusPart[] = [{ text: "tau", keep: 0 }];
  if (a !== undefined && a.id !== "") {
    const name = a.name !== undefined && a.name !== "" ? escapeLabel(a.name, { maxColumns: 24 }) : undefined;
    parts.push({ text: agentLabel(a.id, a.name), keep: 5, ...(name !== undefined ? { short: name } : {}) });
  }
  if (model !== undefined) parts.push({ text: model, keep: 7, short: truncateMiddle(model, 16) });
  // A model that cannot be used says so beside its name, and is kept longer than the name.
  if (a?.modelProblem !== undefined) parts.push({ text: `⚠ ${a.modelProblem}`, keep: 8, short: "⚠" });
  parts.push({ text: s.state, keep: 9 });
  // The shown agent's work status: model-authored, so escaped and bounded first.
  if (a?.work !== undefined) {
    const title = truncateEnd(sanitize(escapeTitle(a.work.title)), 60);
    parts.push({ text: title === "" ? a.work.phase : `${a.work.phase}: ${title}`, keep: 2, short: a.work.phase });
  }
  if (s.mcp !== undefined) parts.push(s.mcp);
  if (a?.contextWindow) parts.push({ text: `ctx ${Math.min(999, Math.round((100 * a.contextTokens) / a.contextWindow))}%`, keep: 6 });
  if (input > 0 || output > 0) parts.push({ text: `↑${input} ↓${output}`, keep: 3, short: `↑${compactCount(input)} ↓${compactCount(output)}` });
  if (cost > 0) parts.push({ text: `$${cost.toFixed(4)}`, keep: 4, short: `$${cost.toFixed(2)}` });
  return parts;
}

const SEP = " · ";

/** The parts joined, shortened and then dropped (lowest `keep` first) until they fit `width`. */
export function fitStatus(parts: readonly StatusPart[], width: number): SafeText {
  const shown = parts.map((p) => ({ ...p, text: sanitize(p.text, { newlines: "escape" }) as string }));
  const line = () => shown.map((p) => p.text).join(SEP);
  const order = [...shown].sort((x, y) => x.keep - y.keep);
  for (const p of order) {
    if (columns(line()) <= width) break;
    if (p.short !== undefined && p.short !== p.text) p.text = sanitize(p.short, { newlines: "escape" });
  }
  for (const p of order) {
    if (columns(line()) <= width || shown.length === 1) break;
    shown.splice(shown.indexOf(p), 1);
  }
  return truncateEnd(line() as SafeText, width);
}
