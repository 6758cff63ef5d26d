// A session handed off (SPEC-handoff): `session.handoff_request` from a live extension becomes the
// replacement session's seed, its daemon started with this daemon's configuration, and
// `session.handed_off` once the replacement took its dossier; the requester is always answered.
// On the replacement's side, the seed becomes its lineage, its agent and its first turn.
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Committed, PublishOutcome } from "../bus/index.js";
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
  readonly role?: string;
  readonly model?: string;
}

/** The seed's file in the replacement session's folder; removed once the replacement started from it. */
export const HANDOFF_SEED_FILE = "handoff-seed.json";

/** How long a handoff waits for its replacement to take the dossier (its extensions start first). */
const REPLACEMENT_SEEDED_MS = 120_000;

export interface HandoffPort {
  readonly sessionId: string;
  /** The state root; undefined for an ephemeral session, which cannot be handed off. */
  readonly stateDir: string | undefined;
  readonly ephemeral: boolean;
  /** Starts the replacement daemon for `sessionId` seeded from `seedPath`; undefined: this daemon cannot. */
  readonly launch: ((o: { sessionId: string; seedPath: string }) => Promise<void>) | undefined;
  agent(agentId: string): AgentState | undefined;
  /** Creates an agent of this session; returns why it could not, or undefined. */
  createAgent(o: NewAgent): Promise<string | undefined>;
  isLive(instance: string, generation: number): boolean;
  publish<N extends EventName>(name: N, data: EventPayloads[N]): Promise<PublishOutcome>;
  sendDirected<N extends EventName>(generation: number | undefined, name: N, data: EventPayloads[N]): boolean;
}

export class HandoffRequests {
  /** One handoff request is handled at a time. */
  private busy = false;

  constructor(private readonly port: HandoffPort) {}

  /**
   * This session is a handoff's replacement: the lineage fact, one agent with the source agent's
   * role and model, and the dossier as its first user turn. The daemon calls it once its extensions
   * started, so the turn finds its provider.
   */
  async seed(seed: HandoffSeed): Promise<void> {
    await this.port.publish("session.lineage_set", { parent_session_id: seed.parent_session_id, parent_agent_id: seed.parent_agent_id });
    const agentId = mintId("a");
    const problem = await this.port.createAgent({ agentId, creator: "harness", role: seed.role, model: seed.model });
    if (problem !== undefined) throw new Error(`the handoff's agent could not be created: ${problem}`);
    await this.port.publish("agent.prompt_submitted", { agent_id: agentId, prompt_id: mintId("p"), source: "human_ui", mode: "queue", text: seed.dossier });
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

  /** The replacement started and the handoff recorded; why not, if it was not. */
  private async handOff(stateDir: string, launch: NonNullable<HandoffPort["launch"]>, agent: AgentState, req: EventPayloads["session.handoff_request"]): Promise<string | undefined> {
    const dir = join(stateDir, "sessions", req.session_id);
    const handedOff = () => this.port.publish("session.handed_off", { successor_session_id: req.session_id, agent_id: agent.id });
    if (existsSync(dir)) {
      // A request repeated after a crash (`:handoff recover resume`): a replacement this session
      // already created is found by its lineage and only recorded, never created a second time.
      const parent = lineageParentOf(stateDir, req.session_id);
      if (parent !== this.port.sessionId) {
        return parent === undefined ? `session ${req.session_id} exists already and continues no session` : `session ${req.session_id} exists already and continues session ${parent}`;
      }
      const o = await handedOff();
      return o.status === "committed" ? undefined : "the replacement exists, but the handoff could not be recorded";
    }
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const seed: HandoffSeed = {
      parent_session_id: this.port.sessionId,
      parent_agent_id: agent.id,
      dossier: req.dossier,
      ...(agent.fold.role !== undefined ? { role: agent.fold.role } : {}),
      ...(agent.fold.model !== undefined ? { model: agent.fold.model } : {}),
    };
    const seedPath = join(dir, HANDOFF_SEED_FILE);
    const tmp = `${seedPath}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(seed), { mode: 0o600 });
    renameSync(tmp, seedPath);
    await launch({ sessionId: req.session_id, seedPath });
    // The replacement deletes its seed once its lineage, agent and dossier turn are committed: only
    // then is the handoff recorded, so a UI that follows it finds the agent and its first turn.
    if (!(await fileGone(seedPath, REPLACEMENT_SEEDED_MS))) {
      return `the replacement session ${req.session_id} started but did not take its dossier within ${REPLACEMENT_SEEDED_MS / 1000} s (its log: ${join(dir, DAEMON_LOG)})`;
    }
    // Fault injection for the crash tests (GATE-handoff, handoff.crash.*): stop for good between the
    // replacement's start and the record of the handoff, so a test can SIGKILL exactly there.
    if (process.env.TAU_HANDOFF_HOLD_AT === "launched") await new Promise<never>(() => {});
    const o = await handedOff();
    return o.status === "committed" ? undefined : "the replacement started, but the handoff could not be recorded";
  }
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

/** Resolves true once `path` no longer exists, false after `ms`. */
async function fileGone(path: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (existsSync(path)) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}
