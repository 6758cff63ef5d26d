// What an agent's model is told about its surroundings (SPEC-skills, SPEC-agent-lifecycle): the
// system prompt rendered from the template with the agent's AGENTS.md files, skill listing and
// working directory, frozen once per agent and process; skills looked up and loaded by name from
// that frozen snapshot; and the previews `tau dev print-*` shows.
import { DEFAULT_SYSTEM_TEMPLATE, collectAgentsMd, renderSystemPrompt, userEnvelope, type AgentContextFile, type FragmentInput } from "./context.js";
import { discoverSkills, loadSkillBody, renderSkillListing, skillPromptText, type SkillScan } from "./skills.js";
import type { DiscoverySources } from "./discovery-sources.js";
import type { HarnessSessionSkillsAvailable } from "../../generated/index.js";

/** The part of an agent's state its context is frozen into. */
export interface ContextHolder {
  /** AGENTS.md files, read once when the agent initializes in this process. */
  agentsMd?: readonly AgentContextFile[];
  /** Skill metadata, discovered once with the AGENTS.md snapshot (SPEC-skills). */
  skills?: SkillScan;
  /** Extensions' prompt fragments, taken once with them (SPEC-extension-declarations). */
  fragments?: readonly FragmentInput[];
  /** The agent's keyed context from extensions, frozen when its initialization finished (agent-initialization.ts). */
  agentContext?: readonly FragmentInput[];
  /** The discovery sources' version its AGENTS.md and skills were taken at (see AgentContext.retake). */
  discoveryTaken?: number;
}

export interface AgentContextOptions {
  readonly projectRoot: string;
  /** Where the user's AGENTS.md and skills live (the config root). */
  readonly configRoot?: string;
  readonly systemTemplate?: string;
  /** A skill discovery skipped: reported live, never failing the session. */
  readonly skillSkipped: (problem: string) => void;
  /** The extensions' prompt fragments now (prompt-fragments.ts). */
  readonly fragments?: () => readonly FragmentInput[];
  /** Extensions' discovery snapshots (discovery-sources.ts), taken with the local files. */
  readonly discovery?: Pick<DiscoverySources, "agentsMd" | "skills">;
}

export interface ToolListing {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
}

export class AgentContext {
  /** Counts the changes of the extensions' discovery sources. */
  private discoveryVersion = 0;

  constructor(private readonly options: AgentContextOptions) {}

  /** An extension's discovery snapshot changed what an agent initializing now would get. */
  discoveryChanged(): void {
    this.discoveryVersion++;
  }

  /**
   * Takes an agent's context again as its initialization finishes (agent-initialization.ts): what
   * was declared while it was pending (held by the session or its own waiters) reaches it. The
   * fragments are taken anew; AGENTS.md and skills only when a discovery snapshot changed since
   * the agent took them (the local files are not read twice for nothing).
   */
  retake(agent: ContextHolder): void {
    agent.fragments = this.options.fragments?.() ?? [];
    if (agent.discoveryTaken !== this.discoveryVersion) {
      delete agent.agentsMd;
      delete agent.skills;
    }
    this.initialize(agent);
  }

  /** Freezes an agent's context once per process: AGENTS.md files, skill metadata and fragments, taken together. */
  initialize(agent: ContextHolder): void {
    const { configRoot, projectRoot } = this.options;
    agent.fragments ??= this.options.fragments?.() ?? [];
    if (agent.agentsMd === undefined || agent.skills === undefined) agent.discoveryTaken = this.discoveryVersion;
    agent.agentsMd ??= this.agentsMd();
    if (agent.skills === undefined) {
      agent.skills = this.skills();
      for (const p of agent.skills.problems) this.options.skillSkipped(p);
    }
  }

  /** The AGENTS.md files an agent initializing now gets: the local ones, then the extensions'. */
  private agentsMd(): AgentContextFile[] {
    const { configRoot, projectRoot, discovery } = this.options;
    const local = configRoot ? collectAgentsMd(configRoot, projectRoot) : [];
    return discovery ? discovery.agentsMd(local) : local;
  }

  /** The skills an agent initializing now gets: the local scan, then the extensions'. */
  private skills(): SkillScan & { readonly owners?: ReadonlyMap<string, string> } {
    const { configRoot, projectRoot, discovery } = this.options;
    const local = discoverSkills(configRoot, projectRoot);
    return discovery ? discovery.skills(local) : local;
  }

  /** What an agent initializing now would get (`harness.session_skills_available`). */
  sessionSkills(): HarnessSessionSkillsAvailable {
    const scan = this.skills();
    return {
      skills: scan.skills.map((s) => ({ name: s.name, description: s.description, path: s.path, source: scan.owners?.get(s.name) ?? s.source })),
      agents_md: this.agentsMd().map((f) => f.path.slice(0, 1024)),
    };
  }

  /** The system prompt: the template with this agent's frozen AGENTS.md, skills and working directory. */
  systemPrompt(agent: ContextHolder | undefined): string {
    if (agent) this.initialize(agent);
    return renderSystemPrompt(this.options.systemTemplate ?? DEFAULT_SYSTEM_TEMPLATE, {
      cwd: this.options.projectRoot,
      agentsMd: agent?.agentsMd ?? [],
      skills: renderSkillListing(agent?.skills?.skills ?? []),
      fragments: agent?.fragments ?? [],
      agentContext: agent?.agentContext ?? [],
    });
  }

  /**
   * The provider text of a human prompt that loads skill `name` of the agent's frozen snapshot
   * (plus the user's text), or why it cannot: an unknown name lists the known ones and says why
   * discovery skipped a skill of that name.
   */
  skillPrompt(agent: ContextHolder, name: string, text: string | undefined): { text: string } | { refusal: string } {
    this.initialize(agent);
    const skills = agent.skills?.skills ?? [];
    const skill = skills.find((s) => s.name === name);
    if (!skill) {
      const known = skills.map((s) => s.name);
      const list = known.length === 0 ? "no skills are available" : `known skills: ${known.join(", ")}`;
      const skipped = agent.skills?.problems.find((p) => p.includes(`/${name}/SKILL.md: `));
      return { refusal: `unknown skill ${JSON.stringify(name.slice(0, 80))}; ${list}${skipped ? `; skipped ${skipped}` : ""}` };
    }
    const loaded = loadSkillBody(skill);
    if ("problem" in loaded) return { refusal: `skill ${skill.name}: ${loaded.problem}` };
    return { text: skillPromptText(skill, loaded.body, text) };
  }

  /**
   * Render previews for `tau dev print-*`: what a new agent's first provider request would hold.
   * Reads render inputs only; creates, changes and stores nothing.
   */
  preview(kind: "system-prompt" | "tools" | "prompt", text: string, tools: readonly ToolListing[], warn: (m: string) => void): string {
    const scan = this.skills();
    for (const p of scan.problems) warn(`skill skipped: ${p}`);
    const system = renderSystemPrompt(this.options.systemTemplate ?? DEFAULT_SYSTEM_TEMPLATE, {
      cwd: this.options.projectRoot,
      agentsMd: this.agentsMd(),
      skills: renderSkillListing(scan.skills),
      fragments: this.options.fragments?.() ?? [],
    });
    if (kind === "system-prompt") return system;
    if (kind === "tools") return JSON.stringify(tools, null, 2);
    return JSON.stringify({ system, messages: [{ role: "user", text: userEnvelope(text) }], tools }, null, 2);
  }
}
