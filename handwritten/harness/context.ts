// Prompt assembly inputs (SPEC-agent-lifecycle, SPEC-skills): the system prompt template, AGENTS.md
// files from the user's config folder and the project's ancestors and the skill listing (both frozen
// when an agent initializes), and the `<user>` envelope for human prompts.
import { readFileSync } from "node:fs";
import { dirname, join, parse } from "node:path";

/** Largest AGENTS.md read; larger files are cut with a marker. */
export const MAX_AGENTS_MD_BYTES = 64 * 1024;

export const DEFAULT_SYSTEM_TEMPLATE = [
  "You are tau, a coding agent working in the user's project at {{cwd}}.",
  "Use the tools you are given to inspect and change files and to run commands; prefer small, verifiable steps.",
  "When you are done, answer with a short summary of what you did and what is left.",
  "{{agents_md}}",
  "{{skills}}",
  "{{fragments}}",
  "{{agent_context}}",
].join("\n");

export interface AgentContextFile {
  readonly path: string;
  readonly text: string;
}

/** AGENTS.md from the user's config root, then each ancestor of `cwd` from the filesystem root down. */
export function collectAgentsMd(configRoot: string, cwd: string): AgentContextFile[] {
  const candidates = [join(configRoot, "AGENTS.md")];
  const ancestors: string[] = [];
  for (let dir = cwd; ; dir = dirname(dir)) {
    ancestors.unshift(join(dir, "AGENTS.md"));
    if (dir === parse(dir).root) break;
  }
  candidates.push(...ancestors);
  const out: AgentContextFile[] = [];
  for (const path of candidates) {
    try {
      const bytes = readFileSync(path);
      const text =
        bytes.length > MAX_AGENTS_MD_BYTES ? `${bytes.subarray(0, MAX_AGENTS_MD_BYTES).toString("utf8")}\n[… AGENTS.md cut at ${MAX_AGENTS_MD_BYTES} bytes]` : bytes.toString("utf8");
      out.push({ path, text });
    } catch {
      // absent or unreadable: not part of the context
    }
  }
  return out;
}

/** An extension's prompt fragment (SPEC-extension-declarations), as an agent froze it. */
export interface FragmentInput {
  readonly instance: string;
  readonly key: string;
  readonly text: string;
}

/** Renders the template with explicit inputs only; unknown placeholders are left as they are. */
export function renderSystemPrompt(template: string, inputs: { cwd: string; agentsMd: readonly AgentContextFile[]; skills?: string; fragments?: readonly FragmentInput[]; agentContext?: readonly FragmentInput[] }): string {
  const agents = inputs.agentsMd.map((f) => `<agents_md path="${f.path}">\n${f.text}\n</agents_md>`).join("\n");
  const fragments = (inputs.fragments ?? []).map((f) => `<extension_fragment instance="${f.instance}" key="${f.key}">\n${f.text}\n</extension_fragment>`).join("\n");
  const agentContext = (inputs.agentContext ?? []).map((f) => `<agent_context instance="${f.instance}" key="${f.key}">\n${f.text}\n</agent_context>`).join("\n");
  // One pass, so text inside an input is never taken for a placeholder.
  const values: Record<string, string> = { cwd: inputs.cwd, agents_md: agents, skills: inputs.skills ?? "", fragments, agent_context: agentContext };
  return template.replace(/\{\{(cwd|agents_md|skills|fragments|agent_context)\}\}/g, (_, key: string) => values[key] ?? "").trimEnd();
}

/** The provider form of a human prompt: fieldless `<user>` envelope, exact `</user>` collisions replaced. */
export function userEnvelope(text: string): string {
  return `<user>\n${text.replaceAll("</user>", "</ user>")}\n</user>`;
}
