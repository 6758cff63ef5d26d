// The agent switcher (SPEC-agent-navigation, "The interactive UI"): `:agent`, `:agents` and the
// keys that cycle and pick agents; the session's agents as a tree from the roster, and the optional
// `fzf` picker — resolved on PATH, run directly with fixed arguments, its input, output and time
// bounded. Every roster string is escaped before it is shown or handed to fzf (the harness escaped
// names and titles already; this is the UI's own pass).
import { spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import type { NavigationMode, RosterRow } from "../../../generated/index.js";
import type { SessionClient } from "../session-client.js";
import { RequestError } from "../../protocol/index.js";
import { agentLabel, escapeLabel, sanitize, truncateEnd } from "../ui/index.js";
import type { AgentView } from "./transcript.js";
import type { UiContext } from "./context.js";

/** Most rows handed to the picker, and most bytes of its input. */
export const PICKER_MAX_ROWS = 4096;
export const PICKER_MAX_INPUT_BYTES = 1024 * 1024;
/** Most bytes of the picker's answer read; a longer answer is an error. */
export const PICKER_MAX_OUTPUT_BYTES = 4096;
/** The picker is ended after this long. */
export const PICKER_TIMEOUT_MS = 120_000;
/** fzf's fixed arguments: one choice, the id (first field) hidden from matching and display. */
export const FZF_ARGS: readonly string[] = ["--no-multi", "--delimiter=\t", "--with-nth=2..", "--height=40%", "--layout=reverse", "--prompt=agent> "];

// The harness's escape of model-authored titles and names (SPEC-agent-team, "Work status"), for a
// title the UI reads from an event: it is shown as the roster shows it.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff<>"\\]/g;

/** Most roster rows the switcher reads, over as many pages as that takes (the rest is counted, not read). */
const ROSTER_MAX_ROWS = 4096;

/** The session's agents from the roster (SPEC-agent-team), page after page up to ROSTER_MAX_ROWS. */
export async function roster(client: SessionClient): Promise<{ rows: RosterRow[]; total: number }> {
  const rows: RosterRow[] = [];
  let cursor: string | undefined;
  let total = 0;
  do {
    const page = await client.request("ui_roster_request", { include_unloaded: false, ...(cursor !== undefined ? { cursor } : {}) });
    rows.push(...page.rows);
    total = page.total;
    cursor = page.next_cursor;
  } while (cursor !== undefined && rows.length < ROSTER_MAX_ROWS);
  return { rows: rows.slice(0, ROSTER_MAX_ROWS), total };
}

/** A model-authored title as the roster shows it: controls, structural Unicode and delimiters as `\u{…}`. */
export function escapeTitle(text: string): string {
  return text.replace(UNSAFE, (ch) => `\\u{${(ch.codePointAt(0) ?? 0).toString(16)}}`);
}

/** A roster string (escaped by the harness already): made terminal-safe and cut to `cols`. */
function shown(text: string, cols: number): string {
  return truncateEnd(sanitize(text, { newlines: "escape" }), cols);
}

/** One line of an agent, without its tree indent: name and id, state, mode, work status. */
export function agentLine(r: RosterRow): string {
  const name = r.display_name !== undefined && r.display_name !== "" ? `${shown(r.display_name, 32)} ` : "";
  // Only a mode the user set shows: an agent shown on its own (`active_auto`) is like any other.
  const mode = r.navigation === "suspended" ? " (suspended)" : "";
  const work = r.work_phase !== undefined ? ` · ${shown(r.work_phase, 16)}${r.work_title !== undefined && r.work_title !== "" ? `: ${shown(r.work_title, 80)}` : ""}` : "";
  return `${name}[${escapeLabel(r.agent_id)}] ${r.status}${mode}${work}`;
}

/**
 * The agents as a tree, each child under its parent (in id order); an agent whose parent is not in
 * the list is a root. `focus` is marked with `*`.
 */
export function agentTree(rows: readonly RosterRow[], focus: string): string[] {
  return agentTreeRows(rows, focus).map((t) => t.text);
}

function agentTreeRows(rows: readonly RosterRow[], focus: string): Array<{ id: string; text: string }> {
  const ids = new Set(rows.map((r) => r.agent_id));
  const children = new Map<string | undefined, RosterRow[]>();
  for (const r of rows) {
    const parent = r.parent_id !== undefined && ids.has(r.parent_id) && r.parent_id !== r.agent_id ? r.parent_id : undefined;
    const list = children.get(parent) ?? [];
    list.push(r);
    children.set(parent, list);
  }
  const out: Array<{ id: string; text: string }> = [];
  const seen = new Set<string>();
  const walk = (parent: string | undefined, depth: number) => {
    for (const r of (children.get(parent) ?? []).sort((x, y) => (x.agent_id < y.agent_id ? -1 : 1))) {
      if (seen.has(r.agent_id)) continue;
      seen.add(r.agent_id);
      out.push({ id: r.agent_id, text: `${r.agent_id === focus ? "*" : " "} ${"  ".repeat(depth)}${depth > 0 ? "└ " : ""}${agentLine(r)}` });
      walk(r.agent_id, depth + 1);
    }
  };
  walk(undefined, 0);
  // Rows a parent cycle left out (never from a valid roster) still show, as roots.
  for (const r of rows) if (!seen.has(r.agent_id)) out.push({ id: r.agent_id, text: `${r.agent_id === focus ? "*" : " "} ${agentLine(r)}` });
  return out;
}

/** The next agent to show from `focus` (`step` 1 or -1): loaded ones in id order, suspended ones skipped. */
export function cycleAgent(ids: readonly string[], focus: string, step: 1 | -1, modeOf: (id: string) => NavigationMode | undefined): string | undefined {
  const sorted = [...ids].sort();
  const n = sorted.length;
  const at = sorted.indexOf(focus);
  for (let k = 1; k <= n; k++) {
    const i = at < 0 ? (step > 0 ? k - 1 : n - k) : (((at + step * k) % n) + n) % n;
    const id = sorted[i] as string;
    if (id === focus) return undefined;
    if (modeOf(id) !== "suspended") return id;
  }
  return undefined;
}

/** The executable `fzf` on PATH, if there is one (the same user's PATH: trusted local code). */
export function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "" || !isAbsolute(dir)) continue;
    const file = join(dir, name);
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The picker's input: a line per agent, its id first (tab-separated), every field escaped. */
export function pickerInput(rows: readonly RosterRow[], focus: string): string {
  let out = "";
  for (const t of agentTreeRows(rows.slice(0, PICKER_MAX_ROWS), focus)) {
    const next = `${escapeLabel(t.id)}\t${t.text.replace(/\t/g, " ")}\n`;
    if (Buffer.byteLength(out) + Buffer.byteLength(next) > PICKER_MAX_INPUT_BYTES) break;
    out += next;
  }
  return out;
}

export type PickerOutcome = { kind: "chosen"; agentId: string } | { kind: "cancelled" } | { kind: "error"; message: string };

/**
 * Runs fzf at `file` with the fixed arguments and `input` on its standard input; its interface is
 * drawn on the terminal (fzf opens it itself). Bounded: its answer up to PICKER_MAX_OUTPUT_BYTES,
 * its time to `timeoutMs`. Exit 1 (no match) or 130 (cancelled) is a cancel.
 */
export function runFzf(file: string, input: string, timeoutMs = PICKER_TIMEOUT_MS): Promise<PickerOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const done = (o: PickerOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    let child;
    try {
      child = spawn(file, [...FZF_ARGS], { stdio: ["pipe", "pipe", "inherit"], shell: false });
    } catch (err) {
      return done({ kind: "error", message: `fzf could not be started: ${(err as Error).message}` });
    }
    timer = setTimeout(() => {
      child.kill("SIGTERM");
      done({ kind: "error", message: `fzf took longer than ${Math.round(timeoutMs / 1000)} s and was ended` });
    }, timeoutMs);
    const chunks: Buffer[] = [];
    let bytes = 0;
    child.stdout.on("data", (b: Buffer) => {
      bytes += b.length;
      if (bytes > PICKER_MAX_OUTPUT_BYTES) {
        child.kill("SIGTERM");
        return done({ kind: "error", message: "fzf's answer was too long; nothing was chosen" });
      }
      chunks.push(b);
    });
    child.on("error", (err) => done({ kind: "error", message: `fzf could not be started: ${err.message}` }));
    child.stdin.on("error", () => {}); // fzf may exit before it reads everything
    child.on("close", (code, signal) => {
      if (code === 1 || code === 130) return done({ kind: "cancelled" });
      if (code !== 0) return done({ kind: "error", message: `fzf ended with ${signal ?? `exit ${code}`}; nothing was chosen` });
      const line = Buffer.concat(chunks).toString("utf8").split("\n")[0] ?? "";
      const agentId = line.split("\t")[0]?.trim() ?? "";
      if (agentId === "") return done({ kind: "cancelled" });
      done({ kind: "chosen", agentId });
    });
    child.stdin.end(input);
  });
}

/** What the switcher needs of the app besides its context: to show another agent, and the terminal for fzf. */
export interface SwitcherHost {
  /** Shows agent `id`: its transcript, its status line; prompts go to it. */
  focusOn(id: string): void;
  /** The key that cycles to the next agent, as `:help` names it. */
  nextAgentKey(): string;
  /**
   * Hands the terminal to `run` (a program drawing on it itself) and takes it back, whatever
   * happens; undefined when the UI gave the terminal up meanwhile.
   */
  lendTerminal<T>(run: () => Promise<T>): Promise<T | undefined>;
  /** The terminal is lent: a second picker is not started. */
  terminalLent(): boolean;
}

const AGENT_SUBCOMMANDS = ["new", "switch", "name", "list", "suspend", "activate"];

/** The main agent: the oldest one no agent started (the session's first), from the roster. */
export function mainAgent(rows: readonly RosterRow[]): string | undefined {
  const ids = new Set(rows.map((r) => r.agent_id));
  const roots = rows.filter((r) => r.parent_id === undefined || !ids.has(r.parent_id));
  roots.sort((x, y) => x.created_at - y.created_at || (x.agent_id < y.agent_id ? -1 : 1));
  return roots[0]?.agent_id;
}

/** `:agents`' rows numbered from 1, so that `:agent N` picks one without a picker program. */
export function numberedTree(rows: readonly RosterRow[], focus: string): { lines: string[]; ids: string[] } {
  const tree = agentTreeRows(rows, focus);
  const width = String(tree.length).length;
  return { lines: tree.map((t, i) => `${String(i + 1).padStart(width)}. ${t.text}`), ids: tree.map((t) => t.id) };
}

export class AgentSwitcher {
  /** The agents' navigation modes as this UI last learned them (the roster, its own requests). */
  private readonly navigation = new Map<string, NavigationMode>();
  /** The ids of the last `:agents` listing, in its numbering (`:agent N`). */
  private listed: string[] = [];
  /** The environment the picker is looked up in (PATH). */
  env: NodeJS.ProcessEnv = process.env;

  constructor(
    private readonly ui: UiContext,
    private readonly host: SwitcherHost,
  ) {}

  /** A human prompt reached `id`: the harness makes it active (SPEC-agent-navigation). */
  prompted(id: string): void {
    this.navigation.set(id, "active");
  }

  /** The next (`step` 1) or previous agent, skipping suspended ones. */
  cycle(step: 1 | -1): void {
    const ids = [...this.ui.transcript.agents.keys()].filter((id) => id !== "");
    if (ids.length < 2) return this.ui.note("info", "this session has one agent (:agent new starts another)");
    const next = cycleAgent(ids, this.ui.focus(), step, (id) => this.navigation.get(id));
    if (next === undefined) return this.ui.note("info", "every other agent is suspended (:agent activate NAME brings one back)");
    return this.switchTo(next);
  }

  /** `:agent ARGS`. */
  async command(client: SessionClient, args: readonly string[]): Promise<void> {
    const [sub, arg] = args;
    if (!AGENT_SUBCOMMANDS.includes(sub as string)) return this.command(client, ["switch", args.join(" ")]);
    const focus = this.ui.focus();
    if (sub === "suspend" || sub === "activate") {
      const id = arg === undefined ? focus : this.named(arg);
      if (id === undefined || id === "") return;
      const set = client.request("ui_navigation_request", { agent_id: id, mode: sub === "suspend" ? "suspended" : "active" });
      const { mode } = await set.catch((err: unknown) => {
        throw err instanceof RequestError && err.failure === "refused" ? new Error(`the session has no loaded agent ${id}`) : err;
      });
      this.navigation.set(id, mode);
      return this.ui.note("info", `agent ${agentLabel(id, this.ui.transcript.agent(id).name)} is ${mode}${mode === "suspended" ? " (it still runs; agent cycling skips it)" : ""}`);
    }
    if (sub === "new") {
      const created = await client.request("ui.create_agent", arg !== undefined ? { display_name: arg } : {}).catch((err: unknown) => {
        throw new Error(`could not create an agent: ${(err as Error).message}`);
      });
      this.switchTo(created.agent_id);
    } else if (sub === "switch") {
      if (arg === undefined) return this.ui.note("error", "usage: :agent switch N|ID|NAME|main");
      const id = await this.chosen(client, arg);
      if (id !== undefined) this.switchTo(id);
    } else if (sub === "name") {
      if (arg === undefined) return this.ui.note("error", "usage: :agent name NAME");
      client.emit("agent.metadata_request", { agent_id: focus, key: "display_name", value: arg });
    } else {
      const rows = [...this.ui.transcript.agents.values()].filter((a) => a.id !== "").map((a) => `${a.id === focus ? "*" : " "} ${agentLabel(a.id, a.name)}${a.busy ? " (working)" : ""}`);
      this.ui.note("info", rows.length > 0 ? rows.join("\n") : "(no agents)");
    }
  }

  /** `:agents`: the session's agents as a numbered tree, each with its state and work status. */
  async list(client: SessionClient): Promise<void> {
    const { rows, total } = await this.rosterRows(client);
    if (rows.length === 0) return this.ui.note("info", "(no agents)");
    const more = total > rows.length ? `\n… ${total - rows.length} more not listed` : "";
    const tree = numberedTree(rows, this.ui.focus());
    this.listed = tree.ids;
    this.ui.note("info", `agents (:agent N, NAME, ID or main switches; ${this.host.nextAgentKey()} cycles):\n${tree.lines.join("\n")}${more}`);
  }

  /**
   * The agent `arg` names: a number of the last `:agents` listing, an id, a name, or `main` (the
   * agent so named, else the session's first agent); undefined, with a note, when none or several.
   */
  private async chosen(client: SessionClient, arg: string): Promise<string | undefined> {
    if (/^[1-9]\d{0,5}$/.test(arg)) {
      const id = this.listed[Number(arg) - 1];
      if (id === undefined) this.ui.note("error", this.listed.length === 0 ? "no numbered list yet: :agents lists the agents" : `:agents listed ${this.listed.length}; there is no ${arg}`);
      return id;
    }
    const named = [...this.ui.transcript.agents.values()].some((a) => a.id !== "" && (a.id === arg || a.name === arg));
    if (arg === "main" && !named) {
      const id = mainAgent((await this.rosterRows(client)).rows.filter((r) => r.loaded));
      if (id === undefined) this.ui.note("error", "this session has no agent yet");
      return id;
    }
    return this.named(arg);
  }

  /**
   * `:agents pick` / the pick key: fzf from PATH chooses an agent, or without fzf the tree is
   * listed. The chosen id is checked against a fresh roster before it is shown; a cancel, an error
   * or a stale choice changes nothing (SPEC-agent-navigation).
   */
  async pick(client: SessionClient): Promise<void> {
    const fzf = findOnPath("fzf", this.env.PATH);
    if (fzf === undefined) return this.list(client);
    if (this.host.terminalLent()) return;
    const { rows } = await this.rosterRows(client);
    const loaded = rows.filter((r) => r.loaded);
    if (loaded.length === 0) return this.ui.note("info", "(no agents)");
    const input = pickerInput(loaded, this.ui.focus());
    // runFzf never rejects: every outcome, an error included, comes back here.
    const outcome = await this.host.lendTerminal(() => runFzf(fzf, input));
    if (outcome === undefined) return;
    if (outcome.kind === "cancelled") return this.ui.note("info", "no agent chosen");
    if (outcome.kind === "error") return this.ui.note("error", outcome.message);
    const fresh = await roster(client);
    const still = fresh.rows.find((r) => r.agent_id === outcome.agentId && r.loaded);
    if (still === undefined) return this.ui.note("error", `the chosen agent ${agentLabel(outcome.agentId, undefined)} is not in this session (any more); nothing changed`);
    this.switchTo(still.agent_id);
  }

  /** The session's loaded agents from the roster; their navigation modes are kept. */
  private async rosterRows(client: SessionClient): Promise<{ rows: RosterRow[]; total: number }> {
    const page = await roster(client);
    for (const r of page.rows) if (r.navigation !== undefined) this.navigation.set(r.agent_id, r.navigation);
    return page;
  }

  /** The agent with this id or name, or undefined (and a note saying why) when not exactly one. */
  private named(arg: string): string | undefined {
    const match = [...this.ui.transcript.agents.values()].filter((a) => a.id !== "" && (a.id === arg || a.name === arg));
    if (match.length === 1) return (match[0] as AgentView).id;
    this.ui.note("error", match.length === 0 ? `no agent is called ${arg}; :agents shows them` : `several agents are called ${arg}; use the id`);
    return undefined;
  }

  private switchTo(id: string): void {
    this.host.focusOn(id);
    this.ui.transcript.agent(id);
    this.ui.note("info", `agent ${agentLabel(id, this.ui.transcript.agent(id).name)}`);
  }
}
