// The harness's post-commit consumers (SPEC-event-publication, "Consumers and successors"): for
// each consumer, the committed events it handles and every event it may publish or send while
// handling one, including the work it continues after awaiting its own publications (a prompt's
// rounds) and the next queued prompt a finished turn starts. codegen checks this table against the
// `onCommitted` sites and against the authority matrix's successor column, and joins it into
// generated/consumers.ts. One literal table, read without running it: no computed names.
// The harness registers its consumers through ConsumerRegistry, by the names declared here, and
// fails to start unless every declared entry is registered: the table is what runs.
import type { EventName } from "../../generated/index.js";
import type { Consumer } from "../bus/index.js";

export const CONSUMERS = {
  /** The session: agents, metadata, skills, titles (session-requests.ts), handoffs (handoff-request.ts), snapshots (harness.ts). */
  session: {
    "ui.create_agent": ["agent.started", "session.agent_loaded", "agent.metadata_set", "agent.initialization_started", "agent.initialization_context_set", "harness.agent_context_initialized", "ui.create_agent_result", "harness.notice"],
    "ui.skill_load": ["agent.prompt_submitted", "ui.skill_load_result", "harness.notice"],
    "agent.metadata_request": ["agent.metadata_set"],
    "agent.prompt_submitted": ["session.title_set"],
    "tool.unregister": [],
    "session.handoff_request": ["session.handed_off", "session.handoff_result"],
    /** Start-agent requests from extensions (agent-start-requests.ts). */
    "agent.start_request": ["agent.started", "session.agent_loaded", "agent.metadata_set", "agent.initialization_started", "agent.initialization_context_set", "harness.agent_context_initialized", "agent.start_result"],
  },
  /** PromptFragments (prompt-fragments.ts, SPEC-extension-declarations): a refused declaration is a live notice. */
  fragments: {
    "extension.prompt_fragment_declared": ["harness.notice"],
  },
  /** DiscoverySources (discovery-sources.ts, SPEC-extension-declarations): each swap republishes the session's skills. */
  discovery: {
    "extension.discovery_snapshot_declared": ["harness.session_skills_available", "harness.notice"],
  },
  /** AgentInitializations (agent-initialization.ts, SPEC-extension-declarations): keyed context and readiness. */
  initializations: {
    "agent.readiness_wait_declared": [],
    "agent.context_declared": ["harness.notice"],
    "agent.discovery_snapshot_declared": ["harness.notice"],
    "agent.readiness_declared": ["agent.initialization_context_set", "harness.agent_context_initialized"],
    /** Session readiness (session-initialization.ts): the session's held agents finish once it is ready. */
    "session.readiness_wait_declared": [],
    "session.readiness_declared": ["session.initialized", "agent.initialization_context_set", "harness.agent_context_initialized"],
  },
  /** ToolRouter (tools.ts). */
  tools: {
    "tool.registration_declared": ["tool.register"],
    "tool.unregistration_declared": ["tool.unregister"],
    "tool.request": ["tool.started", "tool.call", "provider.tool_error", "tool.result", "tool.result_display"],
    "tool.progress_reported": ["tool.progress"],
    "tool.result_reported": ["provider.tool_result", "provider.tool_error", "tool.result", "tool.result_display"],
    "tool.error_reported": ["provider.tool_error", "tool.result", "tool.result_display"],
    "tool.cancelled_reported": ["provider.tool_error", "tool.result", "tool.result_display"],
    "agent.cancel_request": ["tool.cancel_request"],
  },
  /**
   * AgentTeam (agent-team.ts, SPEC-agent-team): the harness's agent tools (`agent_start`, …) a
   * model called, a finished turn's result for waiting parents and watchers, and a cancel reaching
   * the cancelled agent's children.
   */
  agents: {
    "tool.request": [
      "agent.started",
      "session.agent_loaded",
      "agent.metadata_set",
      "agent.initialization_started",
      "agent.initialization_context_set",
      "harness.agent_context_initialized",
      "agent.prompt_submitted",
      "agent.work_status_set",
      "agent.cancel_request",
      "session.watch_set",
      "provider.tool_result",
      "provider.tool_error",
    ],
    "agent.outer_turn_finished": ["provider.tool_result", "agent.prompt_submitted"],
    "agent.prompt_failed": ["provider.tool_result"],
    "agent.cancel_request": ["agent.cancel_request"],
  },
  /** ShellCommandRouter (shell-commands.ts). */
  shell: {
    "shell.command_request": ["shell.command_started"],
    "shell.command_progress_reported": ["shell.command_progress"],
    "shell.command_finished_reported": ["shell.command_finished"],
  },
  /**
   * The agent loop (prompts.ts and the owners it puts together). Whatever may start a round, fail it or end a turn
   * (which starts the next queued prompt) may publish all of the loop's facts: each entry spells
   * them out, since the table is read as literals.
   */
  prompts: {
    "ui.prompt_submit": ["agent.prompt_submitted"],
    "agent.internal_prompt_request": ["agent.prompt_submitted"],
    "agent.external_message_reported": ["agent.prompt_submitted"],
    "ui.model_select": ["agent.model_set"],
    "ui.compact_request": [
      "agent.compaction_started",
      "agent.compaction_summarized",
      "agent.compaction_committed",
      "agent.compaction_failed",
      "agent.prompt_started",
      "agent.prompt_submitted",
      "agent.prompt_failed",
      "agent.stats_updated",
      "provider.request",
      "provider.request_part",
      "provider.cancel_request",
      "provider.response_updated",
      "provider.response_failed",
      "provider.tool_result",
      "provider.tool_error",
      "agent.outer_turn_finished",
      "harness.notice",
    ],
    "provider.models_declared": ["provider.models_updated", "harness.models_available", "harness.notice", "agent.stats_updated"],
    "provider.response_delta_reported": ["provider.response_updated"],
    /** An automatic permission review (SPEC-sandbox-reviewer): one tool-less round, its answer directed to the requester. */
    "sandbox.review_request": ["provider.request", "provider.request_part", "provider.cancel_request", "sandbox.review_result"],
    /** An MCP server's sampling (SPEC-mcp, "Sampling"): one tool-less round, its answer directed to the requester. */
    "mcp.sampling_request": ["provider.request", "provider.request_part", "provider.cancel_request", "mcp.sampling_result"],
    "mcp.sampling_cancel": ["provider.cancel_request", "mcp.sampling_result"],
    "provider.retry_reported": ["provider.retry_scheduled"],
    "sandbox.state_reported": [],
    "handoff.state_reported": [],
    "agent.prompt_submitted": [
      "agent.initialization_started",
      "agent.initialization_context_set",
      "harness.agent_context_initialized",
      "agent.prompt_started",
      "agent.prompt_failed",
      "provider.request",
      "provider.request_part",
      "provider.cancel_request",
      "provider.response_updated",
      "provider.response_failed",
      "agent.outer_turn_finished",
      "agent.compaction_started",
      "agent.compaction_summarized",
      "agent.compaction_committed",
      "agent.compaction_failed",
      "agent.stats_updated",
      "provider.tool_result",
      "provider.tool_error",
      "harness.notice",
      "agent.prompt_submitted",
    ],
    "provider.response_finished_reported": [
      "sandbox.review_result",
      "mcp.sampling_result",
      "session.title_set",
      "provider.response_finished",
      "agent.stats_updated",
      "tool.request",
      "provider.tool_error",
      "agent.prompt_started",
      "agent.prompt_failed",
      "provider.request",
      "provider.request_part",
      "provider.cancel_request",
      "provider.response_updated",
      "provider.response_failed",
      "agent.outer_turn_finished",
      "agent.compaction_started",
      "agent.compaction_summarized",
      "agent.compaction_committed",
      "agent.compaction_failed",
      "agent.prompt_submitted",
      "provider.tool_result",
      "harness.notice",
    ],
    "provider.response_failed_reported": [
      "sandbox.review_result",
      "mcp.sampling_result",
      "agent.prompt_started",
      "agent.prompt_failed",
      "provider.request",
      "provider.request_part",
      "provider.cancel_request",
      "provider.response_updated",
      "provider.response_failed",
      "agent.outer_turn_finished",
      "agent.compaction_started",
      "agent.compaction_summarized",
      "agent.compaction_committed",
      "agent.compaction_failed",
      "agent.prompt_submitted",
      "agent.stats_updated",
      "provider.tool_result",
      "provider.tool_error",
      "harness.notice",
    ],
    "provider.tool_result": [
      "agent.prompt_started",
      "agent.prompt_failed",
      "provider.request",
      "provider.request_part",
      "provider.cancel_request",
      "provider.response_updated",
      "provider.response_failed",
      "agent.outer_turn_finished",
      "agent.compaction_started",
      "agent.compaction_summarized",
      "agent.compaction_committed",
      "agent.compaction_failed",
      "agent.prompt_submitted",
      "agent.stats_updated",
      "provider.tool_result",
      "provider.tool_error",
      "harness.notice",
    ],
    "provider.tool_error": [
      "agent.prompt_started",
      "agent.prompt_failed",
      "provider.request",
      "provider.request_part",
      "provider.cancel_request",
      "provider.response_updated",
      "provider.response_failed",
      "agent.outer_turn_finished",
      "agent.compaction_started",
      "agent.compaction_summarized",
      "agent.compaction_committed",
      "agent.compaction_failed",
      "agent.prompt_submitted",
      "agent.stats_updated",
      "provider.tool_result",
      "provider.tool_error",
      "harness.notice",
    ],
    "agent.cancel_request": [
      "provider.cancel_request",
      "agent.prompt_cancelled",
      "agent.outer_turn_finished",
      "agent.prompt_started",
      "agent.prompt_failed",
      "provider.request",
      "provider.request_part",
      "provider.response_updated",
      "provider.response_failed",
      "agent.compaction_started",
      "agent.compaction_summarized",
      "agent.compaction_committed",
      "agent.compaction_failed",
      "agent.prompt_submitted",
      "agent.stats_updated",
      "provider.tool_result",
      "provider.tool_error",
      "harness.notice",
    ],
  },
} as const satisfies Record<string, Partial<Record<EventName, readonly EventName[]>>>;

export type ConsumerName = keyof typeof CONSUMERS;

/** The events a consumer declares. */
export type DeclaredEvent<C extends ConsumerName> = keyof (typeof CONSUMERS)[C] & EventName;

/** What the registry registers with: the bus's post-commit hook. */
export interface CommitHook {
  onCommitted<N extends EventName>(name: N, consumer: Consumer<N>): void;
}

/**
 * Registers post-commit consumers by their declaration: a handler for an event its consumer does
 * not declare does not compile (and is refused at run time), and `assertComplete` refuses a
 * declaration that nothing registered, so the table and the running consumers cannot drift apart.
 */
export class ConsumerRegistry {
  private readonly registered = new Set<string>();

  constructor(
    private readonly hook: CommitHook,
    private readonly table: { readonly [consumer: string]: { readonly [event: string]: readonly string[] | undefined } } = CONSUMERS,
  ) {}

  consume<C extends ConsumerName, N extends DeclaredEvent<C>>(consumer: C, name: N, handler: Consumer<N>): void {
    if (this.table[consumer]?.[name] === undefined) {
      throw new Error(`consumer ${consumer} registers for ${name}, which it does not declare (handwritten/harness/consumers.ts)`);
    }
    const key = `${consumer} ${name}`;
    if (this.registered.has(key)) throw new Error(`consumer ${consumer} registers for ${name} twice`);
    this.registered.add(key);
    this.hook.onCommitted(name, handler);
  }

  /** Every declared (consumer, event) with no registration, as `consumer event`. */
  missing(): string[] {
    const out: string[] = [];
    for (const [consumer, events] of Object.entries(this.table)) {
      for (const event of Object.keys(events)) if (!this.registered.has(`${consumer} ${event}`)) out.push(`${consumer} ${event}`);
    }
    return out;
  }

  /** Throws unless every declared consumer entry has been registered. */
  assertComplete(): void {
    const missing = this.missing();
    if (missing.length > 0) {
      throw new Error(`declared post-commit consumers never registered (handwritten/harness/consumers.ts): ${missing.join(", ")}`);
    }
  }
}
