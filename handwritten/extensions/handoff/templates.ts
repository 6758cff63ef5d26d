// Handoff templates (SPEC-handoff, "Templates"): the request (call.md) and the dossier's (dossier.md), resolved at each use, first found wins — the
// project's `.tau/handoff/<name>`, the global `<config root>/handoff/<name>`, the built-in text.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** A template file larger than this is skipped. */
export const TEMPLATE_MAX_BYTES = 64 * 1024;

export type TemplateName = "call.md" | "dossier.md";

export const BUILTIN_TEMPLATES: Readonly<Record<TemplateName, string>> = {
  "call.md": [
    "The user asked to hand this session off to a fresh session that will continue the work.",
    "",
    "Stop starting new work. At a safe point:",
    "1. Call `{{get_template_tool}}` with `{}`. It answers the dossier template, the exact file reserved for the dossier, where this session's transcript is, and a Finish id. Do not write a dossier, or invent a path for it, before that call.",
    "2. Write the dossier into exactly that file with your usual file tools, following the template.",
    "3. Call `{{finish_tool}}` with the Finish id, and nothing else, then end your turn.",
  ].join("\n"),
  "dossier.md": [
    "Write the continuation dossier for the fresh session that will continue this work. Its first user",
    "message will give it the dossier file's path; the new model sees nothing else of this session.",
    "",
    "Include: the goal and the user's instructions and preferences; what is done, with file paths;",
    "what is in progress and the exact next steps; decisions made and why; open questions; anything that",
    "only this conversation knows. Refresh facts, results, permissions and the next action before you",
    "finish. Mark anything that still needs the user's approval as such: the dossier grants no permission",
    "of its own.",
  ].join("\n"),
};

export interface ResolvedTemplate {
  readonly text: string;
  /** `project`, `global` or `builtin`, with the file for the first two. */
  readonly origin: "project" | "global" | "builtin";
  readonly path?: string;
}

/**
 * The template `name`: the first of the project's, the global and the built-in one that is usable.
 * A candidate that exists but is larger than TEMPLATE_MAX_BYTES, unreadable, not a file or holds a
 * NUL is skipped, and `warn` says why.
 */
export function resolveTemplate(name: TemplateName, roots: { project: string; config: string }, warn: (text: string) => void = () => {}): ResolvedTemplate {
  const candidates: Array<[ResolvedTemplate["origin"], string]> = [
    ["project", join(roots.project, ".tau", "handoff", name)],
    ["global", join(roots.config, "handoff", name)],
  ];
  for (const [origin, path] of candidates) {
    let size: number;
    try {
      const st = statSync(path);
      if (!st.isFile()) {
        warn(`handoff template ${path} is not a file; skipped`);
        continue;
      }
      size = st.size;
    } catch {
      continue; // absent: the next candidate
    }
    if (size > TEMPLATE_MAX_BYTES) {
      warn(`handoff template ${path} is larger than ${TEMPLATE_MAX_BYTES} bytes; skipped`);
      continue;
    }
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      warn(`handoff template ${path} cannot be read (${(err as Error).message}); skipped`);
      continue;
    }
    if (text.includes("\u0000")) {
      warn(`handoff template ${path} holds a NUL character; skipped`);
      continue;
    }
    if (text.trim() === "") {
      warn(`handoff template ${path} is empty; skipped`);
      continue;
    }
    return { text, origin, path };
  }
  return { text: BUILTIN_TEMPLATES[name], origin: "builtin" };
}

/** Replaces each `{{name}}` with its value; unknown placeholders stay as written. */
export function fillTemplate(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(/\{\{([a-z_]+)\}\}/g, (whole, key: string) => values[key] ?? whole);
}
