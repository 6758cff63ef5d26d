// `tau ext handoff`: session handoff (SPEC-handoff), built only on the extension SDK. It asks the
// harness for everything it cannot do itself — prompts into the agent (`agent.internal_prompt_request`,
// `only_tools` for the writer's turn) and the replacement session (`session.handoff_request`) — and
// holds the user's prompts of the deferral window by intercepting them before they commit.
import { existsSync, mkdirSync, openSync, closeSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { Extension, RequestError, ToolFailure, type DeliveredEvent } from "../../sdk/index.js";
import type { HandoffSettings } from "../../../generated/index.js";
import { resolveRoots } from "../../config/index.js";
import { ID_RANDOM_BYTES, formatId } from "../../startup/launch-facts.js";
import { randomHex } from "../../startup/random.js";
import { fillTemplate, resolveTemplate, type TemplateName } from "./templates.js";
import { assembleDossier, contentProblem, formatRecovery, readRecovery, removeRecovery, writeAtomic, type RecoveryPhase, type RecoveryState } from "./recovery.js";

/** Submitted dossier content is at most this many characters. */
export const DOSSIER_MAX_CHARS = 1024 * 1024;
/** At most this many prompts are deferred in one window; later ones are refused with a notice. */
export const DEFERRED_MAX = 256;

interface Settings {
  autoPercent: number;
  criticalPercent: number;
  reminderMs: number;
  writerAttempts: number;
  writerRetryMs: number;
}

/** The settings spec/ declares (HandoffSettings, checked before this), each with its default. */
function settingsOf(s: HandoffSettings): Settings {
  return {
    autoPercent: s.auto_percent ?? 0,
    criticalPercent: s.critical_percent ?? 90,
    reminderMs: s.reminder_ms ?? 120_000,
    writerAttempts: s.writer_attempts ?? 3,
    writerRetryMs: s.writer_retry_ms ?? 1000,
  };
}

type Phase = Exclude<RecoveryPhase, "releasing">;

/**
 * Fault injection for the crash tests (GATE-handoff, handoff.crash.*): with TAU_HANDOFF_HOLD_AT set
 * to a step's name, the extension announces the step with a notice and stops there for good, so a
 * test can SIGKILL the daemon at exactly that point. Unset (always, outside those tests): no effect.
 */
const HOLD_AT = process.env.TAU_HANDOFF_HOLD_AT;
type PromptKind = "call" | "reminder" | "writer";

interface Active {
  readonly agentId: string;
  readonly manual: boolean;
  phase: Phase;
  readonly key: string;
  deferred: string[];
  newSession?: string;
  submissionId?: string;
  submitted: boolean;
  writerAttempts: number;
  callPromptId?: string;
  writerPromptId?: string;
  reminded: boolean;
  reminder?: NodeJS.Timeout;
  retry?: NodeJS.Timeout;
}

export async function main(): Promise<void> {
  const ext = await Extension.connect();
  const declared = ext.settings("handoff");
  if (declared === undefined) return;
  const settings = settingsOf(declared);
  const roots = resolveRoots();
  const project = process.cwd();
  const sessionId = ext.configuration.session_id;
  const prefix = ext.configuration.tool_prefix;
  const tool = (name: string) => `${prefix}${name}`;
  const recoveryPath = join(ext.configuration.state_dir, `recovery-${sessionId}.md`);
  const warn = (text: string) => ext.notice("warning", text.slice(0, 1024));

  let active: Active | undefined;
  let intercepting = false;
  /** Kinds of the prompts this extension asked for, in order; each `agent.prompt_submitted` of ours takes the first. */
  const expected: Array<{ kind: PromptKind; agentId: string }> = [];
  /** Successors recorded in this session's journal (`session.handed_off`). */
  const handedOff = new Set<string>();
  /** Context usage per agent (`agent.stats_updated`), and automatic attempts since the last compaction. */
  const usage = new Map<string, { tokens: number; window?: number }>();
  const autoAttempts = new Map<string, number>();
  /**
   * Per agent, the ids of the prompts of this extension its journal holds (replayed and live), in
   * order, and which of them started a turn: a prompt submitted but never started when the daemon
   * stopped is closed as interrupted at the next start, so only a started one has reached the agent.
   */
  const ourPrompts = new Map<string, string[]>();
  const startedPrompts = new Set<string>();
  const promptWaiters = new Set<() => void>();
  let releasing = 0;
  const hold = async (step: string): Promise<void> => {
    if (HOLD_AT !== step) return;
    ext.notice("info", `handoff held at ${step} (TAU_HANDOFF_HOLD_AT)`);
    await new Promise<never>(() => {});
  };

  const report = () => {
    if (!active) return;
    void ext.emit("handoff.state_reported", { agent_id: active.agentId, phase: active.phase, deferred: active.deferred.length, text: statusLine(active.agentId).slice(0, 1024) });
  };
  const reportIdle = (agentId: string) => void ext.emit("handoff.state_reported", { agent_id: agentId, phase: "idle", deferred: 0, text: "no handoff" });
  const save = (a: Active) => {
    const state: RecoveryState = { session: sessionId, agent: a.agentId, phase: a.phase, deferred: a.deferred, ...(a.newSession ? { newSession: a.newSession } : {}) };
    writeAtomic(recoveryPath, formatRecovery(state));
  };
  const setPhase = (a: Active, phase: Phase) => {
    a.phase = phase;
    save(a);
    report();
  };
  const prompt = (agentId: string, kind: PromptKind, text: string, onlyTools?: string[]) => {
    expected.push({ kind, agentId });
    void ext.emit("agent.internal_prompt_request", { agent_id: agentId, mode: "queue", text, ...(onlyTools ? { only_tools: onlyTools } : {}) });
  };

  function usageText(agentId: string): string {
    const u = usage.get(agentId);
    if (!u) return "context usage unknown";
    if (!u.window) return `context ${u.tokens} tokens (window unknown)`;
    return `context ${u.tokens} of ${u.window} tokens (${Math.round((u.tokens / u.window) * 100)}%)`;
  }
  function statusLine(agentId: string): string {
    const auto = settings.autoPercent > 0 ? `automatic at ${settings.autoPercent}% then ${settings.criticalPercent}% (attempts ${autoAttempts.get(agentId) ?? 0} of 2)` : "automatic start off";
    const state = active ? `handoff ${active.phase}, ${active.deferred.length} deferred prompt(s)` : "no handoff";
    return `${state}; ${usageText(agentId)}; ${auto}`;
  }

  function ensureIntercepting(): void {
    if (intercepting) return;
    intercepting = true;
    ext.intercept(["ui.prompt_submit", "ui.compact_request"], -100, (e) => {
      const a = active;
      const agentId = typeof e.data.agent_id === "string" ? e.data.agent_id : undefined;
      if (!a || agentId !== a.agentId || !(a.phase === "deferring" || a.phase === "writing" || a.phase === "cutover")) return { action: "pass" };
      if (e.name === "ui.compact_request") {
        warn("compaction is refused while a handoff is under way; :handoff cancel ends it");
        return { action: "drop" };
      }
      const text = e.data.text;
      if (typeof text !== "string") return { action: "pass" };
      if (a.deferred.length >= DEFERRED_MAX) {
        warn(`this handoff already holds ${DEFERRED_MAX} deferred prompts; this one was not taken`);
        return { action: "drop" };
      }
      // Captured and on disk before the drop is answered: a crash from here on loses nothing.
      a.deferred.push(text);
      try {
        save(a);
      } catch (err) {
        a.deferred.pop();
        warn(`the prompt could not be deferred (${(err as Error).message}); it was sent as usual`);
        return { action: "pass" };
      }
      report();
      return { action: "drop" };
    });
  }

  function start(agentId: string, manual: boolean): string {
    if (active) throw new ToolFailure(`a handoff is already under way (${active.phase}); one at a time per session`);
    // An ephemeral session keeps no journal to link the replacement to.
    if (!existsSync(join(roots.state, "sessions", sessionId, "events.cbor"))) throw new ToolFailure("an ephemeral session cannot be handed off");
    if (releasing > 0) throw new ToolFailure("the last handoff's deferred prompts are still being handed to the agent; start again once it has taken them");
    if (readRecovery(recoveryPath) !== undefined) throw new ToolFailure("a handoff of this session left a recovery file; :handoff recover shows it, then resume or abandon it");
    const a: Active = { agentId, manual, phase: "requested", key: randomHex(16), deferred: [], submitted: false, writerAttempts: 0, reminded: false };
    active = a;
    ensureIntercepting();
    save(a);
    report();
    sendCall(a, "call");
    return `handoff requested for agent ${agentId}: the agent is asked to get ready once it is idle`;
  }

  function sendCall(a: Active, kind: "call" | "reminder"): void {
    const call = resolveTemplate("call.md", { project, config: roots.config }, warn);
    const text = fillTemplate(call.text, { key: a.key, go_tool: tool("handoff_go"), go_deferred_tool: a.manual ? tool("handoff_go_deferred") : tool("handoff_go") });
    prompt(a.agentId, kind, kind === "reminder" ? `Reminder: a handoff is waiting for your answer.\n\n${text}` : text);
  }

  function go(a: Active): void {
    if (a.reminder) clearTimeout(a.reminder);
    a.newSession = formatId("s", Date.now(), randomHex(ID_RANDOM_BYTES));
    setPhase(a, "deferring");
    sendWriter(a);
  }

  function sendWriter(a: Active): void {
    a.writerAttempts++;
    a.submissionId = randomHex(8);
    const template: TemplateName = "dossier.md";
    const t = resolveTemplate(template, { project, config: roots.config }, warn);
    const text = fillTemplate(t.text, {
      submission_id: a.submissionId,
      submit_tool: tool("handoff_submit"),
      journal_path: join(roots.state, "agents", a.agentId, "events.cbor"),
      source_session: sessionId,
    });
    prompt(a.agentId, "writer", text, [tool("handoff_submit")]);
  }

  /** Ends the handoff without a cutover: the deferred prompts go to the agent, in order, once. */
  function end(a: Active, why: string): void {
    if (a.reminder) clearTimeout(a.reminder);
    if (a.retry) clearTimeout(a.retry);
    active = undefined;
    void release(a.agentId, a.deferred).catch((err: unknown) => warn(`the handoff's deferred prompts: ${(err as Error).message}`));
    reportIdle(a.agentId);
    if (why !== "") ext.notice("info", `handoff ended: ${why}`.slice(0, 1024));
  }

  /** How many of the agent's prompts of ours after the first `base` have started a turn. */
  const startedAfter = (agentId: string, base: number): number => (ourPrompts.get(agentId) ?? []).slice(base).filter((id) => startedPrompts.has(id)).length;
  const waitForStarted = (agentId: string, base: number, count: number): Promise<void> =>
    new Promise((resolve) => {
      const check = () => {
        if (startedAfter(agentId, base) < count) return;
        promptWaiters.delete(check);
        resolve();
      };
      promptWaiters.add(check);
      check();
    });

  /**
   * Sends deferred prompts to the agent, in order, exactly once, even across crashes: the recovery
   * file first records the release and how many prompts of ours the agent's journal held before it
   * (`releaseBase`); a resumed release counts those since that started a turn (they run in order,
   * so they are the first ones) and sends only the rest. The file is deleted once every one started.
   */
  async function release(agentId: string, deferred: readonly string[], base?: number): Promise<number> {
    // Prompts of ours already asked for but not yet committed count as before the release.
    const releaseBase = base ?? (ourPrompts.get(agentId)?.length ?? 0) + expected.filter((x) => x.agentId === agentId).length;
    releasing++;
    try {
      if (deferred.length > 0) writeAtomic(recoveryPath, formatRecovery({ session: sessionId, agent: agentId, phase: "releasing", deferred, releaseBase }));
      const sent = Math.min(deferred.length, startedAfter(agentId, releaseBase));
      for (const [i, text] of deferred.slice(sent).entries()) {
        void ext.emit("agent.internal_prompt_request", { agent_id: agentId, mode: "queue", text });
        if (i === 0) await hold("release");
      }
      await waitForStarted(agentId, releaseBase, deferred.length);
      removeRecoveryWarn();
      return deferred.length - sent;
    } finally {
      releasing--;
    }
  }

  /** Deletes the recovery file; a failure is reported as a warning notice, never thrown (SPEC-handoff). */
  function removeRecoveryWarn(): void {
    try {
      removeRecovery(recoveryPath);
    } catch (err) {
      warn(`the handoff's recovery file ${recoveryPath} could not be deleted: ${(err as Error).message}`);
    }
  }

  function writeDossierFile(dossier: string): string {
    const dir = join(project, ".tau");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `handoff_${sessionId}.md`);
    // Exclusive: an existing dossier of this session is never overwritten.
    const fd = openSync(path, "wx", 0o600);
    try {
      writeSync(fd, dossier);
    } finally {
      closeSync(fd);
    }
    return path;
  }

  async function submit(a: Active, content: string): Promise<string> {
    a.submitted = true;
    const target = a.newSession as string;
    setPhase(a, "cutover");
    const dossier = assembleDossier({ source: sessionId, target, content, deferred: a.deferred });
    let file: string;
    try {
      file = writeDossierFile(dossier);
    } catch (err) {
      end(a, `the dossier file could not be written (${(err as Error).message})`);
      throw new ToolFailure(`the handoff failed: the dossier file could not be written (${(err as Error).message})`);
    }
    await hold("dossier");
    const result = await requestCutover(a.agentId, target, dossier);
    if (!result.ok) {
      end(a, `the replacement session was not created (${result.error ?? "refused"})`);
      throw new ToolFailure(`the handoff failed: ${result.error ?? "refused"}`);
    }
    active = undefined;
    await hold("cutover");
    removeRecoveryWarn();
    reportIdle(a.agentId);
    return `handoff complete: the work continues in session ${target} (dossier: ${file}). End your turn now.`;
  }

  /**
   * Asks the harness for the replacement session (SPEC-handoff); a refusal carries the harness's
   * reason. When the harness goes away first there is no answer: this process is leaving, and the
   * recovery file must stay as it is for `:handoff recover`, so nothing settles.
   */
  function requestCutover(agentId: string, target: string, dossier: string): Promise<{ ok: boolean; error?: string }> {
    return ext.request("session.handoff_request", { agent_id: agentId, session_id: target, dossier }).then(
      () => ({ ok: true }),
      (err: unknown) => (err instanceof RequestError && err.failure === "refused" ? { ok: false, error: err.message } : new Promise<never>(() => {})),
    );
  }

  // ---- tools -------------------------------------------------------------------------------
  const keyArgs = { type: "object", properties: { key: { type: "string", maxLength: 128 } }, required: ["key"], additionalProperties: false };
  const checkKey = (args: unknown, ctx: { agentId: string }): Active => {
    const a = active;
    const key = typeof args === "object" && args !== null ? (args as { key?: unknown }).key : undefined;
    if (!a || a.agentId !== ctx.agentId || (a.phase !== "requested" && a.phase !== "confirming")) throw new ToolFailure("no handoff is waiting for an answer");
    if (key !== a.key) throw new ToolFailure("that is not the key of the current handoff request");
    return a;
  };
  ext.registerTool({
    name: "handoff_start",
    description:
      "Starts a handoff of this session to a fresh session. Call this ONLY when the user has explicitly asked for a handoff in their own words; never on your own initiative.",
    parameters: { type: "object", properties: { user_request: { type: "string", maxLength: 1024, description: "the user's words asking for the handoff" } }, required: ["user_request"], additionalProperties: false },
    run: async (args, ctx) => {
      const words = typeof args === "object" && args !== null ? (args as { user_request?: unknown }).user_request : undefined;
      if (typeof words !== "string" || words.trim() === "") throw new ToolFailure("user_request must quote the user's request for a handoff");
      return { output: `${start(ctx.agentId, true)}. Finish your turn now.` };
    },
  });
  ext.registerTool({
    name: "handoff_go",
    description: "Answers a handoff request: you are at a safe point and ready to write the handoff dossier. Only with the key the request gave you.",
    parameters: keyArgs,
    run: async (args, ctx) => {
      const a = checkKey(args, ctx);
      go(a);
      return { output: "GO accepted. End this turn now without calling any other tool; you will be asked for the dossier next." };
    },
  });
  ext.registerTool({
    name: "handoff_go_deferred",
    description: "Answers a handoff request the user started: ready, but the user should confirm first (Ready / Wait / Cancel). Only with the key the request gave you.",
    parameters: keyArgs,
    run: async (args, ctx) => {
      const a = checkKey(args, ctx);
      if (!a.manual) throw new ToolFailure("this handoff started automatically; answer with handoff_go");
      if (a.reminder) clearTimeout(a.reminder);
      setPhase(a, "confirming");
      ext.notice("info", "handoff: the agent is ready. :handoff ready to go on, :handoff wait to keep working, :handoff cancel to stop");
      return { output: "The user is asked to confirm. End this turn now." };
    },
  });
  ext.registerTool({
    name: "handoff_submit",
    description: "Submits the handoff dossier (Markdown) with the submission id you were given. The only tool of the writer turn.",
    parameters: {
      type: "object",
      properties: { id: { type: "string", maxLength: 64 }, content: { type: "string" } },
      required: ["id", "content"],
      additionalProperties: false,
    },
    run: async (args, ctx) => {
      const a = active;
      const o = typeof args === "object" && args !== null ? (args as { id?: unknown; content?: unknown }) : {};
      if (!a || a.agentId !== ctx.agentId || a.phase !== "writing" || a.submitted) throw new ToolFailure("no handoff is waiting for a dossier");
      if (o.id !== a.submissionId) throw new ToolFailure("that is not the current submission id");
      const problem = contentProblem(o.content, DOSSIER_MAX_CHARS);
      if (problem !== undefined) throw new ToolFailure(problem);
      return { output: await submit(a, o.content as string) };
    },
  });

  // ---- events ------------------------------------------------------------------------------
  ext.subscribe(
    ["session.handed_off", "agent.prompt_submitted", "agent.prompt_started"],
    ["session.handed_off", "agent.prompt_submitted", "agent.prompt_started", "agent.outer_turn_finished", "agent.prompt_failed", "agent.stats_updated", "agent.compaction_committed"],
  );
  ext.on("session.handed_off", (e) => void handedOff.add(e.data.successor_session_id));
  ext.on("agent.prompt_submitted", (e) => {
    if (e.data.source !== "extension" || e.data.submitter !== ext.instance) return;
    const ids = ourPrompts.get(e.data.agent_id) ?? [];
    ids.push(e.data.prompt_id);
    ourPrompts.set(e.data.agent_id, ids);
    if (e.replay) return;
    const i = expected.findIndex((x) => x.agentId === e.data.agent_id);
    if (i < 0) return;
    const kind = (expected.splice(i, 1)[0] as { kind: PromptKind }).kind;
    const a = active;
    if (!a || a.agentId !== e.data.agent_id) return;
    if (kind === "call" || kind === "reminder") a.callPromptId = e.data.prompt_id;
    else a.writerPromptId = e.data.prompt_id;
  });
  ext.on("agent.prompt_started", (e) => {
    if (ourPrompts.get(e.data.agent_id)?.includes(e.data.prompt_id)) {
      startedPrompts.add(e.data.prompt_id);
      for (const w of [...promptWaiters]) w();
    }
    const a = active;
    if (e.replay || !a || e.data.prompt_id !== a.writerPromptId || a.phase !== "deferring") return;
    setPhase(a, "writing");
  });
  const turnEnded = (e: DeliveredEvent<"agent.outer_turn_finished"> | DeliveredEvent<"agent.prompt_failed">) => {
    const a = active;
    if (e.replay || !a) return;
    const promptId = e.data.prompt_id;
    if (promptId === a.callPromptId && a.phase === "requested") {
      a.callPromptId = undefined;
      // No answer in this turn: one reminder after reminder_ms, never a second.
      if (a.reminded) return;
      a.reminded = true;
      a.reminder = setTimeout(() => {
        if (active === a && a.phase === "requested") sendCall(a, "reminder");
      }, settings.reminderMs);
    } else if (promptId === a.writerPromptId && !a.submitted) {
      a.writerPromptId = undefined;
      if (a.writerAttempts >= settings.writerAttempts) return end(a, `no dossier after ${a.writerAttempts} writer turn(s)`);
      if (a.phase === "writing") a.phase = "deferring";
      a.retry = setTimeout(() => {
        if (active === a && !a.submitted) sendWriter(a);
      }, settings.writerRetryMs);
    }
  };
  ext.on("agent.outer_turn_finished", turnEnded);
  ext.on("agent.prompt_failed", turnEnded);
  ext.on("agent.stats_updated", (e) => {
    const { agent_id, context_tokens, context_window } = e.data;
    usage.set(agent_id, { tokens: context_tokens, ...(context_window !== undefined ? { window: context_window } : {}) });
    if (e.replay || settings.autoPercent <= 0 || active || !context_window) return;
    const percent = (context_tokens / context_window) * 100;
    const attempts = autoAttempts.get(agent_id) ?? 0;
    const threshold = attempts === 0 ? settings.autoPercent : attempts === 1 ? settings.criticalPercent : Infinity;
    if (percent < threshold) return;
    autoAttempts.set(agent_id, attempts + 1);
    try {
      start(agent_id, false);
      ext.notice("info", `handoff started automatically at ${Math.round(percent)}% of the context window (attempt ${attempts + 1} of 2)`);
    } catch (err) {
      warn(`automatic handoff not started: ${(err as Error).message}`);
    }
  });
  ext.on("agent.compaction_committed", (e) => {
    if (!e.replay) autoAttempts.delete(e.data.agent_id);
  });

  // `:handoff ARGS` from a UI: the answer's text, or the error's message as the refusal.
  ext.serve("handoff.command_request", async ({ agent_id, args }) => ({ text: (await command(agent_id, args)).slice(0, 1024) }));

  function command(agentId: string, args: readonly string[]): string | Promise<string> {
    const [verb = "start", sub] = args;
    const a = active;
    switch (verb) {
      case "start":
        return start(agentId, true);
      case "status":
        return statusLine(a?.agentId ?? agentId);
      case "ready":
        if (!a || a.phase !== "confirming") throw new Error("no handoff is waiting for your confirmation");
        go(a);
        return "handoff: going ahead; prompts you type now are deferred into the new session";
      case "wait":
        if (!a || a.phase !== "confirming") throw new Error("no handoff is waiting for your confirmation");
        return "handoff: still waiting; :handoff ready when you are, :handoff cancel to stop";
      case "cancel":
        if (!a) throw new Error("no handoff is under way");
        if (a.phase === "cutover") throw new Error("the replacement session is being created; it is too late to cancel");
        end(a, "cancelled");
        return `handoff cancelled; ${a.deferred.length} deferred prompt(s) sent to the agent`;
      case "recover":
        return recover(agentId, sub);
      default:
        throw new Error("usage: :handoff [start|status|ready|wait|cancel|recover [resume|abandon]]");
    }
  }

  /** The dossier a crashed cutover left in the project, when its first line names this handoff's new session. */
  function leftDossier(newSession: string): string | undefined {
    const path = join(project, ".tau", `handoff_${sessionId}.md`);
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      return undefined;
    }
    return text.split("\n", 1)[0] === `# Handoff from session ${sessionId} to session ${newSession}` && contentProblem(text, DOSSIER_MAX_CHARS * 2) === undefined ? text : undefined;
  }

  /**
   * `:handoff recover`: shows, resumes or abandons what a crashed handoff left. Resuming is itself
   * crash-safe: a cutover whose replacement exists is only recorded (the harness finds it by its
   * lineage and creates nothing again), one whose dossier was written is completed, and otherwise
   * the deferred prompts are released to the agent skipping those its journal already holds.
   */
  async function recover(agentId: string, sub: string | undefined): Promise<string> {
    if (active) throw new Error(`a handoff is under way (${active.phase}); :handoff cancel ends it`);
    const r = readRecovery(recoveryPath);
    if (!r) return "no handoff recovery file for this session";
    const crossed = r.newSession !== undefined && handedOff.has(r.newSession);
    const what = `recovery file ${recoveryPath}: phase ${r.phase}, ${r.deferred.length} deferred prompt(s)${crossed ? `, already handed off to ${r.newSession}` : ""}`;
    if (sub === undefined) return `${what}; :handoff recover resume or :handoff recover abandon`;
    if (sub === "abandon") {
      removeRecovery(recoveryPath);
      return `${what}: abandoned and deleted`;
    }
    if (sub !== "resume") throw new Error("usage: :handoff recover [resume|abandon]");
    // The replacement exists: its dossier holds the prompts, so none is sent here again.
    if (crossed) {
      removeRecovery(recoveryPath);
      return `${what}: nothing to send; deleted`;
    }
    const target = r.agent || agentId;
    if (r.phase === "cutover" && r.newSession !== undefined) {
      const dossier = leftDossier(r.newSession);
      if (dossier !== undefined) {
        const result = await requestCutover(target, r.newSession, dossier);
        if (!result.ok) throw new Error(`${what}: the cutover could not be completed (${result.error ?? "refused"}); the file is kept`);
        removeRecovery(recoveryPath);
        return `${what}: cutover completed; the work continues in session ${r.newSession} (tau attach ${r.newSession}); deleted`;
      }
      if (existsSync(join(roots.state, "sessions", r.newSession, "events.cbor"))) {
        removeRecovery(recoveryPath);
        return `${what}: session ${r.newSession} exists; nothing to send; deleted`;
      }
    }
    const sent = await release(target, r.deferred, r.phase === "releasing" ? r.releaseBase : undefined);
    return `${what}: ${sent} prompt(s) sent to agent ${target}, in order (${r.deferred.length - sent} already sent before); deleted`;
  }

  ext.ready();
}
