// A session handed off (SPEC-handoff): `session.handoff_request` from a live extension becomes the
// replacement session's seed, its daemon started with this daemon's configuration, and
// `session.handed_off` once the replacement took its dossier; the requester is always answered.
// On the replacement's side, the seed becomes its lineage, its agent and its first turn.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Committed, PublishOutcome } from "../bus/index.js";
import { processAlive } from "../sessions/index.js";
import { journalPath, replayJournal, validateJournalRecord, type JournalRecord } from "../store/index.js";
import { REQUESTS, type EventName, type EventPayloads, type SessionHandoffRequest } from "../../generated/index.js";
import { answerEvent, refusal } from "../protocol/index.js";
import { DAEMON_LOG } from "../startup/launch-facts.js";
import type { AgentState } from "./harness.js";
import { mintId } from "./ids.js";
import type { NewAgent } from "./session-requests.js";

/** What a handoff's source harness hands its replacement, as JSON in HANDOFF_SEED_FILE. */
export interface HandoffSeed {
  readonly parent_session_id: string;
  readonly parent_agent_id: string;
  readonly dossier: string;
  /** The replacement's agent and its first prompt, minted by the source: a resumed seeding finds what it already did. */
  readonly agent_id?: string;
  readonly prompt_id?: string;
  readonly role?: string;
  readonly model?: string;
}

/**
 * The seed's files in the replacement session's folder. The source writes HANDOFF_SEED_FILE; the
 * replacement claims it by renaming it to HANDOFF_SEED_CLAIMED before it acts on it and deletes that
 * once its lineage, agent and first turn are committed; a source that gives up renames an unclaimed
 * seed to HANDOFF_SEED_ABANDONED. A rename is atomic, so exactly one of the two wins: a seed is either
 * taken (the work continues there) or abandoned (it stays with the source), never both.
 */
export const HANDOFF_SEED_FILE = "handoff-seed.json";
export const HANDOFF_SEED_CLAIMED = "handoff-seed.claimed.json";
export const HANDOFF_SEED_ABANDONED = "handoff-seed.abandoned.json";

/** How long a handoff waits for its replacement to claim the seed (its extensions start first). */
const REPLACEMENT_SEEDED_MS = 120_000;
/** A replacement that dies before it took its seed is started again at most this many times. */
const REPLACEMENT_LAUNCHES = 3;

export interface HandoffPort {
  readonly sessionId: string;
  /** The state root; undefined for an ephemeral session, which cannot be handed off. */
  readonly stateDir: string | undefined;
  readonly ephemeral: boolean;
  /**
   * Starts the replacement daemon for `sessionId` seeded from `seedPath` (resuming its journal when
   * `resume`) and answers its pid; undefined: this daemon cannot.
   */
  readonly launch: ((o: { sessionId: string; seedPath: string; resume: boolean }) => Promise<{ pid: number }>) | undefined;
  /** The pid of a daemon running `sessionId`, if one is. */
  readonly runningPid?: (sessionId: string) => Promise<number | undefined>;
  agent(agentId: string): AgentState | undefined;
  /** Creates an agent of this session; returns why it could not, or undefined. */
  createAgent(o: NewAgent): Promise<string | undefined>;
  isLive(instance: string, generation: number): boolean;
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<PublishOutcome>;
  sendDirected<N extends EventName>(generation: number | undefined, name: N, data: EventPayloads[N]): boolean;
}

/**
 * Fault injection for the crash tests (GATE-handoff, handoff.kill.*): with TAU_HANDOFF_HOLD_AT naming
 * `step`, stop there for good so a test can SIGKILL exactly there; with TAU_HANDOFF_HOLD_ONCE (a path
 * prefix) set too, only the first process to reach the step holds. Unset (always, outside those
 * tests): no effect.
 */
export async function holdAt(step: string): Promise<void> {
  if (process.env.TAU_HANDOFF_HOLD_AT !== step) return;
  const once = process.env.TAU_HANDOFF_HOLD_ONCE;
  if (once !== undefined) {
    try {
      closeSync(openSync(`${once}.${step}`, "wx"));
    } catch {
      return;
    }
  }
  await new Promise<never>(() => {});
}

export class HandoffRequests {
  /** One handoff request is handled at a time. */
  private busy = false;

  constructor(private readonly port: HandoffPort) {}

  /**
   * This session is a handoff's replacement: the lineage fact, one agent with the source agent's
   * role and model, and the dossier as its first user turn. The daemon calls it once its extensions
   * started, so the turn finds its provider. Each step is skipped when a seeding this one resumes
   * (its daemon was killed part way) already committed it, so none happens twice.
   */
  async seed(seed: HandoffSeed): Promise<void> {
    const stateDir = this.port.stateDir;
    await holdAt("replacement");
    if (stateDir === undefined || lineageParentOf(stateDir, this.port.sessionId) === undefined) {
      await this.port.publish("session.lineage_set", { parent_session_id: seed.parent_session_id, parent_agent_id: seed.parent_agent_id });
    }
    await holdAt("lineage");
    const agentId = seed.agent_id ?? mintId("a");
    const promptId = seed.prompt_id ?? mintId("p");
    if (this.port.agent(agentId) === undefined) {
      const problem = await this.port.createAgent({ agentId, creator: "harness", role: seed.role, model: seed.model });
      if (problem !== undefined) throw new Error(`the handoff's agent could not be created: ${problem}`);
    }
    if (stateDir !== undefined && promptInJournal(stateDir, agentId, promptId)) return;
    await this.port.publish("agent.prompt_submitted", { agent_id: agentId, prompt_id: promptId, source: "human_ui", mode: "queue", text: seed.dossier });
  }

  /**
   * Checked, then the replacement's seed is written, its daemon started with this daemon's
   * configuration, and `session.handed_off` committed.
   */
  async onHandoffRequest(c: Committed<"session.handoff_request">): Promise<void> {
    const gen = c.publisher.generation;
    const instance = c.publisher.instance;
    if (c.publisher.class !== "extension" || gen === undefined || instance === undefined || !this.port.isLive(instance, gen)) return;
    await answerEvent("session.handoff_request", c.data, (req) => this.handOffFor(req), (name, data) => this.port.sendDirected(gen, name, data));
  }

  /** The checks, then the handoff itself; a refusal says why. */
  private async handOffFor(req: SessionHandoffRequest): Promise<{ session_id: string }> {
    const refuse = (why: string) => refusal(REQUESTS["session.handoff_request"], why);
    const { stateDir, launch } = this.port;
    if (this.port.ephemeral || stateDir === undefined) throw refuse("an ephemeral session cannot be handed off");
    if (launch === undefined) throw refuse("this daemon cannot start a replacement session");
    const agent = this.port.agent(req.agent_id);
    if (!agent || agent.fold.ephemeral) throw refuse(`unknown agent ${req.agent_id}`);
    if (req.session_id === this.port.sessionId || !/^s-[A-Za-z0-9_-]{1,100}$/.test(req.session_id)) throw refuse("the new session id is not a fresh session id");
    const problem = dossierProblem(req.dossier, req.session_id);
    if (problem !== undefined) throw refuse(problem);
    if (this.busy) throw refuse("a handoff of this session is already being created");
    this.busy = true;
    let error: string | undefined;
    try {
      error = await this.handOff(stateDir, launch, agent, req);
    } catch (err) {
      error = `the replacement session could not be started: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      this.busy = false;
    }
    if (error !== undefined) throw refuse(error);
    return { session_id: req.session_id };
  }

  /**
   * The replacement started and the handoff recorded; why not, if it was not. A request repeated
   * after a crash (`:handoff recover resume`) picks up where the last one stopped: a seed it wrote
   * is taken by the replacement (started again if it is not running), a replacement already seeded
   * is only recorded; nothing is created twice.
   */
  private async handOff(stateDir: string, launch: NonNullable<HandoffPort["launch"]>, agent: AgentState, req: EventPayloads["session.handoff_request"]): Promise<string | undefined> {
    const dir = join(stateDir, "sessions", req.session_id);
    const seedPath = join(dir, HANDOFF_SEED_FILE);
    const handedOff = async () => ((await this.port.publish("session.handed_off", { successor_session_id: req.session_id, agent_id: agent.id })).status === "committed" ? undefined : "the replacement exists, but the handoff could not be recorded");
    const found = replacementState(stateDir, req.session_id, this.port.sessionId);
    if (found.kind === "foreign") return found.why;
    if (found.kind === "seeded") return handedOff();
    if (found.kind === "fresh") {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const seed: HandoffSeed = {
        parent_session_id: this.port.sessionId,
        parent_agent_id: agent.id,
        dossier: req.dossier,
        agent_id: mintId("a"),
        prompt_id: mintId("p"),
        ...(agent.fold.role !== undefined ? { role: agent.fold.role } : {}),
        ...(agent.fold.model !== undefined ? { model: agent.fold.model } : {}),
      };
      const tmp = `${seedPath}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(seed), { mode: 0o600 });
      renameSync(tmp, seedPath);
      await holdAt("seed");
    }
    const error = await this.untilSeeded(stateDir, launch, req.session_id);
    if (error !== undefined) return error;
    // Stop for good between the replacement's seeding and the record of the handoff (crash tests).
    await holdAt("launched");
    return handedOff();
  }

  /**
   * Waits until the replacement took its seed, starting it when it is not running (again when it
   * died first, a few times). The seed is abandoned when it was never claimed in time; a claimed
   * one is waited for as long as its daemon lives.
   */
  private async untilSeeded(stateDir: string, launch: NonNullable<HandoffPort["launch"]>, sessionId: string): Promise<string | undefined> {
    const dir = join(stateDir, "sessions", sessionId);
    const seedPath = join(dir, HANDOFF_SEED_FILE);
    const claimed = join(dir, HANDOFF_SEED_CLAIMED);
    const log = join(dir, DAEMON_LOG);
    let pid = await this.port.runningPid?.(sessionId);
    let launches = 0;
    const deadline = Date.now() + REPLACEMENT_SEEDED_MS;
    for (;;) {
      if (!existsSync(seedPath) && !existsSync(claimed)) return undefined;
      if (pid === undefined || !processAlive(pid)) {
        if (launches >= REPLACEMENT_LAUNCHES) return abandonSeed(dir, `the replacement session ${sessionId} stopped ${launches} time(s) before it took its dossier (its log: ${log})`);
        launches++;
        try {
          pid = (await launch({ sessionId, seedPath, resume: existsSync(journalPath(stateDir, "session", sessionId)) })).pid;
        } catch {
          pid = undefined;
          continue;
        }
      }
      if (Date.now() >= deadline && existsSync(seedPath)) {
        const why = abandonSeed(dir, `the replacement session ${sessionId} started but did not take its dossier within ${REPLACEMENT_SEEDED_MS / 1000} s (its log: ${log})`);
        if (!existsSync(claimed)) return why;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** Abandons an unclaimed seed (atomically: the replacement can no longer take it) and answers `why`. */
function abandonSeed(dir: string, why: string): string {
  try {
    renameSync(join(dir, HANDOFF_SEED_FILE), join(dir, HANDOFF_SEED_ABANDONED));
  } catch {
    // claimed meanwhile (or gone): the replacement has it
  }
  return why;
}

/** The session a seed file names as its parent, if the file is there and says so. */
function seedParentOf(path: string): string | undefined {
  try {
    const p = (JSON.parse(readFileSync(path, "utf8")) as { parent_session_id?: unknown }).parent_session_id;
    return typeof p === "string" ? p : undefined;
  } catch {
    return undefined;
  }
}

type ReplacementState = { kind: "fresh" } | { kind: "pending" } | { kind: "seeded" } | { kind: "foreign"; why: string };

/**
 * What a handoff from `source` to `sessionId` finds in the state root: nothing yet (or a folder
 * an interrupted request made before its seed: fresh), its seed not yet taken (pending), its
 * replacement seeded (its lineage names `source`, the seed gone), or a session that is not its own.
 */
export function replacementState(stateDir: string, sessionId: string, source: string): ReplacementState {
  const dir = join(stateDir, "sessions", sessionId);
  if (!existsSync(dir)) return { kind: "fresh" };
  const seedParent = seedParentOf(join(dir, HANDOFF_SEED_FILE)) ?? seedParentOf(join(dir, HANDOFF_SEED_CLAIMED));
  if (seedParent !== undefined) return seedParent === source ? { kind: "pending" } : { kind: "foreign", why: `session ${sessionId} is being created as the continuation of session ${seedParent}` };
  const parent = lineageParentOf(stateDir, sessionId);
  if (parent === source) return { kind: "seeded" };
  if (parent !== undefined) return { kind: "foreign", why: `session ${sessionId} exists already and continues session ${parent}` };
  if (existsSync(join(dir, HANDOFF_SEED_ABANDONED))) return { kind: "foreign", why: `the handoff to session ${sessionId} was abandoned` };
  if (existsSync(journalPath(stateDir, "session", sessionId))) return { kind: "foreign", why: `session ${sessionId} exists already and continues no session` };
  return { kind: "fresh" };
}

/** Whether the agent's journal holds the prompt `promptId` (read without writing or locking it). */
function promptInJournal(stateDir: string, agentId: string, promptId: string): boolean {
  let found = false;
  try {
    replayJournal<JournalRecord>(journalPath(stateDir, "agent", agentId), {
      validate: validateJournalRecord,
      collect: false,
      onRecord: (r) => {
        if (r.event.name === "agent.prompt_submitted" && (r.event.data as { prompt_id?: unknown }).prompt_id === promptId) found = true;
      },
    });
  } catch {
    return false;
  }
  return found;
}

/** Why a dossier cannot be a replacement's first turn: empty, a NUL, or a first line that does not name the new session. */
export function dossierProblem(dossier: string, sessionId: string): string | undefined {
  if (dossier.trim() === "") return "the dossier is empty";
  if (dossier.includes("\u0000")) return "the dossier holds a NUL character";
  const first = dossier.split("\n", 1)[0] ?? "";
  if (!first.includes(sessionId)) return `the dossier's first line does not name the new session ${sessionId}`;
  return undefined;
}

/**
 * The session `sessionId` continues (its `session.lineage_set`), read from its journal without
 * writing or locking it; undefined when it has none or cannot be read.
 */
export function lineageParentOf(stateDir: string, sessionId: string): string | undefined {
  let parent: string | undefined;
  try {
    replayJournal<JournalRecord>(journalPath(stateDir, "session", sessionId), {
      validate: validateJournalRecord,
      collect: false,
      onRecord: (r) => {
        const p = (r.event.data as { parent_session_id?: unknown }).parent_session_id;
        if (r.event.name === "session.lineage_set" && typeof p === "string") parent = p;
      },
    });
  } catch {
    return undefined;
  }
  return parent;
}
