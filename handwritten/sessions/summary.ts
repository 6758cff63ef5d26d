// The session summary (SPEC-session-lifecycle, "The session summary"): what a saved session is for
// people — its title, project and members — folded from the session journal by the harness and
// kept in that journal's checkpoint, so listings read one small file per session, never a journal.

/** A title is one line of at most this many characters (code points), `…` included. */
export const TITLE_MAX_CHARS = 80;

export interface SessionSummary {
  readonly summary: 1;
  readonly project_root: string;
  /** Microseconds since the epoch: the session's first record. */
  readonly created_at: number;
  readonly title?: string;
  /** The agents loaded at the journal's end, sorted. */
  readonly agents: readonly string[];
  /** The session this one continues (a handoff's `session.lineage_set`, SPEC-handoff). */
  readonly parent?: string;
  /** The session this one was handed off to (its latest `session.handed_off`). */
  readonly successor?: string;
  /** The session this one is a fork of (`session.forked`, SPEC-session-lifecycle "Forks"). */
  readonly forked_from?: string;
}

/**
 * A title from a prompt: its first line with text, control characters dropped, white space
 * collapsed, cut to TITLE_MAX_CHARS with `…`; undefined when the prompt has no visible text.
 */
export function titleFromPrompt(text: string): string | undefined {
  for (const raw of text.split(/\r\n|\r|\n/, 64)) {
    // eslint-disable-next-line no-control-regex
    const line = raw.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g, " ").replace(/\s+/g, " ").trim();
    if (line === "") continue;
    const chars = [...line];
    return chars.length <= TITLE_MAX_CHARS ? line : `${chars.slice(0, TITLE_MAX_CHARS - 1).join("").trimEnd()}…`;
  }
  return undefined;
}

/** Folds a session journal's records, in order, into its summary. */
export class SessionSummaryFold {
  private title: string | undefined;
  private readonly agents = new Set<string>();
  private createdAt: number | undefined;
  private parent: string | undefined;
  private successor: string | undefined;
  private forkedFrom: string | undefined;

  constructor(private readonly projectRoot: string) {}

  get hasTitle(): boolean {
    return this.title !== undefined;
  }

  fold(name: string, data: Readonly<Record<string, unknown>>, recordedAt: number): void {
    this.createdAt ??= recordedAt;
    if (name === "session.agent_loaded" && typeof data.agent_id === "string") this.agents.add(data.agent_id);
    else if (name === "session.agent_unloaded" && typeof data.agent_id === "string") this.agents.delete(data.agent_id);
    else if (name === "session.title_set" && typeof data.title === "string") this.title = data.title;
    else if (name === "session.lineage_set" && typeof data.parent_session_id === "string") this.parent = data.parent_session_id;
    else if (name === "session.handed_off" && typeof data.successor_session_id === "string") this.successor = data.successor_session_id;
    else if (name === "session.forked" && typeof data.from_session_id === "string") this.forkedFrom = data.from_session_id;
  }

  value(now: number): SessionSummary {
    return {
      summary: 1,
      project_root: this.projectRoot,
      created_at: this.createdAt ?? now,
      ...(this.title !== undefined ? { title: this.title } : {}),
      agents: [...this.agents].sort(),
      ...(this.parent !== undefined ? { parent: this.parent } : {}),
      ...(this.successor !== undefined ? { successor: this.successor } : {}),
      ...(this.forkedFrom !== undefined ? { forked_from: this.forkedFrom } : {}),
    };
  }
}

/** A summary read back from a checkpoint's fold, checked field by field; undefined when it is not one. */
export function parseSessionSummary(fold: Record<string, unknown> | undefined): SessionSummary | undefined {
  if (fold === undefined || fold.summary !== 1) return undefined;
  const { project_root, created_at, title, agents, parent, successor, forked_from } = fold;
  if (typeof project_root !== "string" || project_root.length > 4096) return undefined;
  if (typeof created_at !== "number" || !Number.isSafeInteger(created_at) || created_at < 0) return undefined;
  if (title !== undefined && (typeof title !== "string" || title.length > 1024)) return undefined;
  if (!Array.isArray(agents) || agents.length > 100_000 || !agents.every((a) => typeof a === "string")) return undefined;
  const link = (v: unknown): v is string => typeof v === "string" && v.length > 0 && v.length <= 128;
  return {
    summary: 1,
    project_root,
    created_at,
    ...(title !== undefined ? { title } : {}),
    agents: agents as string[],
    ...(link(parent) ? { parent } : {}),
    ...(link(successor) ? { successor } : {}),
    ...(link(forked_from) ? { forked_from } : {}),
  };
}
