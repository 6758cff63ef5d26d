// What one prompt's rounds are told and may call, fixed at its first round (SPEC-tool-routing,
// "Tool policy by role"): the tools it offers after the role's policy and the prompt's own
// restriction (`only_tools`), the system prompt derived from them (the role catalog only while
// `agent_start` is offered), and why any other call is refused. Every round of the prompt lists
// these tools, and a call runs only when its tool is among them and still has the owner it was
// offered from: a tool registered mid-prompt is offered from the next prompt, one unregistered
// mid-prompt fails its calls.
import type { RolePolicy } from "../../generated/index.js";
import type { ToolListing } from "./agent-context.js";
import { withheldBy, type HarnessTool, type PolicySubject } from "./tool-policy.js";
import type { RegisteredTool } from "./tools.js";

export interface SnapshotSources {
  /** The agent's role (`default` when it has none) and that role's policy. */
  readonly role: string | undefined;
  readonly policy: RolePolicy | undefined;
  /** The harness's own tools (HARNESS_TOOLS): answered by the harness, never by an extension. */
  readonly harnessTools: Iterable<HarnessTool>;
  /** The extensions' live registrations: read now, and again when a refusal is worded. */
  readonly registry: ReadonlyMap<string, RegisteredTool>;
  /** The prompt's own restriction (SPEC-handoff): nothing else is offered. */
  readonly onlyTools?: ReadonlySet<string> | undefined;
  /** The system prompt, given what the snapshot offers (its capability-derived guidance). */
  readonly system: (offers: (name: string) => boolean) => string;
}

export class PromptSnapshot {
  /** The system prompt of every round of the prompt. */
  readonly system: string;
  /** The tools every round lists, by name. */
  readonly tools: readonly ToolListing[];
  /** Offered tools → the extension instance each was offered from (undefined: the harness's own). */
  private readonly offered = new Map<string, string | undefined>();
  /** Tools known at capture and not offered → why. */
  private readonly withheld = new Map<string, string>();
  private readonly registry: ReadonlyMap<string, RegisteredTool>;
  private readonly role: string;
  private readonly policy: RolePolicy | undefined;

  constructor(s: SnapshotSources) {
    this.registry = s.registry;
    this.role = s.role ?? "default";
    this.policy = s.policy;
    const subjects: Array<PolicySubject & ToolListing> = [...s.harnessTools, ...[...s.registry.values()].map((t) => ({ ...t, onByDefault: true }))];
    const listed: ToolListing[] = [];
    const restricted: string[] = [];
    for (const tool of subjects) {
      const why = withheldBy(s.policy, tool);
      if (why !== undefined) {
        this.withheld.set(tool.name, this.notForRole(tool.name, why));
      } else if (s.onlyTools !== undefined && !s.onlyTools.has(tool.name)) {
        restricted.push(tool.name);
      } else {
        this.offered.set(tool.name, tool.owner);
        listed.push({ name: tool.name, description: tool.description, parameters: tool.parameters });
      }
    }
    this.tools = listed.sort((a, b) => (a.name < b.name ? -1 : 1));
    const only = `only ${this.tools.map((t) => t.name).join(", ") || "no tools"} may be called`;
    for (const name of restricted) this.withheld.set(name, `tool ${name} is not available in this turn; ${only}`);
    this.system = s.system((name) => this.offered.has(name));
  }

  /**
   * Why a call of tool `name` in this prompt is not run, or undefined when it may run: a tool the
   * prompt offered that is gone now, or belongs to another extension than the one that offered it,
   * is refused like one it never offered.
   */
  refusal(name: string): string | undefined {
    if (this.offered.has(name)) {
      const from = this.offered.get(name);
      if (from === undefined) return undefined; // the harness's own: always there
      const now = this.registry.get(name);
      if (now === undefined) return `tool ${name} was unregistered during this prompt (its extension ${from} withdrew it or exited); the call was not run`;
      if (now.owner !== from) return `tool ${name} now belongs to extension ${now.owner}, not to ${from}, which offered it in this prompt; the call was not run`;
      return undefined;
    }
    const withheld = this.withheld.get(name);
    if (withheld !== undefined) return withheld;
    const late = this.registry.get(name);
    if (late === undefined) return `unknown tool ${name}`;
    const why = withheldBy(this.policy, { ...late, onByDefault: true });
    if (why !== undefined) return this.notForRole(name, why);
    return `tool ${name} was registered after this prompt started; it is offered from the next prompt, and the call was not run`;
  }

  private notForRole(name: string, why: string): string {
    return `tool ${name} is not available to agents of role ${this.role} (${why}); the call was not run`;
  }
}
