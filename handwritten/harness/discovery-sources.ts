// Discovery snapshots from extensions (SPEC-extension-declarations, "Discovery snapshots"): each
// live instance's complete contribution of AGENTS.md files and skills, bounded as a whole,
// validated item by item (an invalid item is diagnosed and omitted), then swapped in at once.
// Agents initializing afterwards take these with the local ones; process memory only.
import { isAbsolute } from "node:path";
import type { Committed } from "../bus/index.js";
import type { DiscoveryItem } from "../../generated/index.js";
import { MAX_AGENTS_MD_BYTES, type AgentContextFile } from "./context.js";
import { MAX_SKILL_DESCRIPTION_CHARS, MAX_SKILL_PROBLEMS, SKILL_NAME, type Skill, type SkillScan } from "./skills.js";

/** Items one snapshot may hold, and the decoded text bytes of all of them. */
export const MAX_DISCOVERY_ITEMS = 256;
export const MAX_DISCOVERY_BYTES = 1024 * 1024;

export interface DiscoverySourcesPort {
  isLive(instance: string, generation: number): boolean;
  warn(message: string): void;
  /** The sources changed: what an agent initializing now would get is published again. */
  changed(): void;
}

export interface Source {
  readonly generation: number;
  readonly agentsMd: readonly AgentContextFile[];
  readonly skills: readonly Skill[];
}

export class DiscoverySources {
  private readonly byInstance = new Map<string, Source>();

  constructor(private readonly port: DiscoverySourcesPort) {}

  onDeclared(c: Committed<"extension.discovery_snapshot_declared">): void {
    const p = c.publisher;
    if (p.class !== "extension" || p.instance === undefined || p.generation === undefined || !this.port.isLive(p.instance, p.generation)) return;
    const taken = this.validated(p.instance, c.data.items);
    if (taken === undefined) return;
    this.byInstance.set(p.instance, { generation: p.generation, ...taken });
    this.port.changed();
  }

  /**
   * A snapshot's valid items, bounded as a whole (past a bound: undefined, with a warning) and
   * validated one by one (each invalid item diagnosed and left out).
   */
  validated(instance: string, items: readonly DiscoveryItem[]): Omit<Source, "generation"> | undefined {
    const refuse = (why: string) => void this.port.warn(`discovery snapshot from extension ${instance} refused: ${why}; its previous one stays`);
    if (items.length > MAX_DISCOVERY_ITEMS) return refuse(`${items.length} items, more than ${MAX_DISCOVERY_ITEMS}`);
    const bytes = items.reduce((n, i) => n + Buffer.byteLength(i.text ?? "") + Buffer.byteLength(i.description ?? ""), 0);
    if (bytes > MAX_DISCOVERY_BYTES) return refuse(`${bytes} bytes of text, more than ${MAX_DISCOVERY_BYTES}`);
    const agentsMd: AgentContextFile[] = [];
    const skills: Skill[] = [];
    const problems: string[] = [];
    items.forEach((item, index) => {
      const problem = itemProblem(item, skills);
      if (problem !== undefined) return void problems.push(`item ${index} (${item.kind} ${JSON.stringify((item.name ?? item.path).slice(0, 80))}): ${problem}`);
      if (item.kind === "agents_md") agentsMd.push({ path: item.path, text: item.text ?? "" });
      else skills.push({ name: item.name ?? "", description: item.description ?? "", path: item.path, source: "extension", mtimeMs: 0 });
    });
    if (problems.length > 0) {
      const listed = problems.slice(0, MAX_SKILL_PROBLEMS).join("; ");
      this.port.warn(`discovery snapshot from extension ${instance}: ${problems.length} invalid item(s) omitted: ${listed}`);
    }
    return { agentsMd, skills };
  }

  /** A connection ended: its source is withdrawn. */
  onOwnerGone(instance: string, generation: number): void {
    if (this.byInstance.get(instance)?.generation !== generation) return;
    this.byInstance.delete(instance);
    this.port.changed();
  }

  /** The live sources by instance name. */
  private live(): Array<[string, Source]> {
    return [...this.byInstance].filter(([instance, s]) => this.port.isLive(instance, s.generation)).sort(([a], [b]) => (a < b ? -1 : 1));
  }

  /** The local AGENTS.md files, then each live instance's. */
  agentsMd(local: readonly AgentContextFile[]): AgentContextFile[] {
    return [...local, ...this.live().flatMap(([, s]) => s.agentsMd)];
  }

  /** The local scan with each live instance's skills added (see mergeSkills). */
  skills(local: SkillScan): SkillScan & { readonly owners: ReadonlyMap<string, string> } {
    return mergeSkills(local, this.live().map(([instance, s]) => [instance, s.skills]));
  }
}

/** Skills with each instance's added, in order: a name taken first keeps it, the later one is diagnosed. */
export function mergeSkills(local: SkillScan, sources: ReadonlyArray<readonly [string, readonly Skill[]]>): SkillScan & { readonly owners: ReadonlyMap<string, string> } {
  const byName = new Map(local.skills.map((s) => [s.name, s]));
  const owners = new Map<string, string>();
  const problems = [...local.problems];
  for (const [instance, skills] of sources) {
    for (const skill of skills) {
      const taken = byName.get(skill.name);
      if (taken !== undefined) {
        if (problems.length < MAX_SKILL_PROBLEMS) problems.push(`extension ${instance}: skill "${skill.name}" (${skill.path}) is also ${taken.path}; the first is kept`);
        continue;
      }
      byName.set(skill.name, skill);
      owners.set(skill.name, instance);
    }
  }
  return { skills: [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : 1)), problems, owners };
}

/** Why an item cannot be taken, or undefined. Duplicate skill names are judged against the items before it. */
function itemProblem(item: DiscoveryItem, earlier: readonly Skill[]): string | undefined {
  if (!isAbsolute(item.path)) return "its path is not absolute";
  if (item.kind === "agents_md") {
    if (item.text === undefined) return "an AGENTS.md item carries no text";
    if (Buffer.byteLength(item.text) > MAX_AGENTS_MD_BYTES) return `its text exceeds ${MAX_AGENTS_MD_BYTES} bytes`;
    return undefined;
  }
  if (item.name === undefined || !SKILL_NAME.test(item.name)) return "the skill name is not lowercase letters, digits and single hyphens (at most 64)";
  const description = item.description ?? "";
  if (description.trim() === "" || description.length > MAX_SKILL_DESCRIPTION_CHARS || /[\r\n]/.test(description)) {
    return `the description must be one non-empty line of at most ${MAX_SKILL_DESCRIPTION_CHARS} characters`;
  }
  if (earlier.some((s) => s.name === item.name)) return "a skill of that name is earlier in the snapshot";
  return undefined;
}
