// A swarm worker's memory (SPEC-swarm, "Worker"): the command table (deduplication; full means
// refused, never evicted, until the process restarts), the blocker history and the updates the
// coordinator has not acknowledged, each under its configured bound. Everything is bound to this
// process's incarnation, minted once here and kept across reconnects and session switches.
import { randomHex } from "../../startup/random.js";
import type { SwarmAnswer, SwarmPrompt, SwarmRejection, SwarmUpdate, SwarmUpdateKind } from "../../../generated/index.js";

export interface WorkerBounds {
  readonly maxCommands: number;
  readonly maxBlockers: number;
  readonly maxUnacked: number;
  readonly maxTextBytes: number;
}

/** What the worker does with the outside world: hand a prompt to its agent, send an update. */
export interface WorkerPort {
  /** Submits `text` to the agent through the internal-prompt path. */
  submit(agentId: string, text: string): void;
  /** Sends an update now when connected; it stays kept until acknowledged either way. */
  send(update: SwarmUpdate): void;
  /** Says something about the worker on its diagnostics (never the credential). */
  diagnostic(text: string): void;
}

type CommandState = "accepted" | "running" | "done";

interface CommandEntry {
  readonly kind: "prompt" | "answer";
  state: CommandState;
  promptId?: string;
  lastText?: string;
}

interface Blocker {
  readonly commandId: string | undefined;
  answered: boolean;
}

/** What an answer says to the agent: the question's id, then the coordinator's answer. */
export function answerPrompt(blockerId: string, text: string): string {
  return `The swarm coordinator answered your question ${blockerId}:\n\n${text}`;
}

export class SwarmWorker {
  /** 16 random bytes: a replacement process is a new incarnation, and the coordinator fences the old one's commands. */
  readonly incarnation = randomHex(16);
  private readonly commands = new Map<string, CommandEntry>();
  /** Our submitted commands waiting for their `agent.prompt_submitted`, in order. */
  private readonly submitted: string[] = [];
  private readonly byPrompt = new Map<string, string>();
  private readonly blockers = new Map<string, Blocker>();
  private readonly unacked: SwarmUpdate[] = [];
  private seq = 0;
  private droppedUpdates = 0;
  /** The agent remote prompts go to: the session's first agent without a parent. */
  agentId: string | undefined;
  /** The command whose prompt the agent is running, which a blocker question is about. */
  private current: string | undefined;

  constructor(
    private readonly bounds: WorkerBounds,
    private readonly port: WorkerPort,
  ) {}

  get commandCount(): number {
    return this.commands.size;
  }

  /** A prompt or answer from the coordinator (already checked against the schema). */
  take(frame: SwarmPrompt | SwarmAnswer): void {
    const id = frame.command_id;
    if (frame.incarnation !== this.incarnation) return this.reject(id, "stale_incarnation");
    // A command seen before is not run again: its updates stand (resent until acknowledged).
    if (this.commands.has(id)) return;
    if (Buffer.byteLength(frame.text, "utf8") > this.bounds.maxTextBytes) return this.reject(id, "oversize");
    if (this.commands.size >= this.bounds.maxCommands) return this.reject(id, "table_full");
    const agentId = this.agentId;
    if (agentId === undefined) return this.reject(id, "no_agent");
    let text = frame.text;
    if (frame.type === "answer") {
      const blocker = this.blockers.get(frame.blocker_id);
      if (blocker === undefined || blocker.answered) return this.reject(id, "unknown_blocker");
      blocker.answered = true;
      text = answerPrompt(frame.blocker_id, frame.text);
    }
    this.commands.set(id, { kind: frame.type, state: "accepted" });
    this.submitted.push(id);
    this.update("accepted", { command_id: id });
    this.port.submit(agentId, text);
  }

  /** A frame that does not hold to the schema: refused, naming its command when that much can be read. */
  invalid(value: unknown, oversize: boolean): void {
    const raw = typeof value === "object" && value !== null ? (value as Record<string, unknown>).command_id : undefined;
    const id = typeof raw === "string" && /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/.test(raw) ? raw : undefined;
    this.update("rejected", { ...(id !== undefined ? { command_id: id } : {}), reason: oversize ? "oversize" : "invalid" });
  }

  /** Our `agent.prompt_submitted`: the oldest submitted command is this prompt. */
  promptSubmitted(promptId: string): void {
    const id = this.submitted.shift();
    const entry = id === undefined ? undefined : this.commands.get(id);
    if (id === undefined || entry === undefined) return;
    entry.promptId = promptId;
    entry.state = "running";
    this.byPrompt.set(promptId, id);
  }

  promptStarted(promptId: string): void {
    this.current = this.byPrompt.get(promptId);
  }

  responseFinished(promptId: string, text: string): void {
    const entry = this.entryOf(promptId);
    if (entry !== undefined && text !== "") entry.lastText = text;
  }

  /** The prompt's turn ended: its result (or failure) goes back, and the prompt is forgotten. */
  turnEnded(promptId: string, outcome: string): void {
    const id = this.byPrompt.get(promptId);
    const entry = id === undefined ? undefined : this.commands.get(id);
    if (id === undefined || entry === undefined) return;
    this.byPrompt.delete(promptId);
    if (this.current === id) this.current = undefined;
    entry.state = "done";
    const text = this.bounded(entry.lastText ?? "");
    delete entry.lastText;
    if (outcome === "completed") this.update("result", { command_id: id, text });
    else this.update("failed", { command_id: id, text: `the turn ended ${outcome}${text === "" ? "" : `: ${text}`}` });
  }

  /** The agent asks the coordinator: a blocker question, kept in the history; undefined when the history is full. */
  ask(question: string): string | undefined {
    if (this.blockers.size >= this.bounds.maxBlockers) return undefined;
    const blockerId = `b${randomHex(8)}`;
    this.blockers.set(blockerId, { commandId: this.current, answered: false });
    this.update("blocker", { blocker_id: blockerId, ...(this.current !== undefined ? { command_id: this.current } : {}), text: this.bounded(question) });
    return blockerId;
  }

  /** Updates up to `seq` arrived: forget them. */
  ack(seq: number): void {
    while (this.unacked.length > 0 && (this.unacked[0] as SwarmUpdate).seq <= seq) this.unacked.shift();
  }

  /** What a new connection sends first, after its welcome: every update not yet acknowledged. */
  pending(): readonly SwarmUpdate[] {
    return this.unacked;
  }

  private entryOf(promptId: string): CommandEntry | undefined {
    const id = this.byPrompt.get(promptId);
    return id === undefined ? undefined : this.commands.get(id);
  }

  private reject(commandId: string, reason: SwarmRejection): void {
    this.update("rejected", { command_id: commandId, reason });
  }

  /** A text sent back is cut to the worker's bound (on a character boundary). */
  private bounded(text: string): string {
    const bytes = Buffer.from(text, "utf8");
    if (bytes.length <= this.bounds.maxTextBytes) return text;
    return bytes.subarray(0, this.bounds.maxTextBytes).toString("utf8").replace(/\uFFFD$/, "");
  }

  private update(kind: SwarmUpdateKind, fields: Omit<SwarmUpdate, "type" | "seq" | "kind">): void {
    const update: SwarmUpdate = { type: "update", seq: ++this.seq, kind, ...fields };
    if (this.unacked.length >= this.bounds.maxUnacked) {
      this.unacked.shift();
      this.droppedUpdates++;
      this.port.diagnostic(`max_unacked (${this.bounds.maxUnacked}) reached: the oldest unacknowledged update was dropped (${this.droppedUpdates} so far)`);
    }
    this.unacked.push(update);
    this.port.send(update);
  }
}
