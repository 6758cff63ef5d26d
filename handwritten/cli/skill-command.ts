// `:skill NAME [text]` (SPEC-skills): the interactive form of `tau run --skill NAME -p text`. The
// terminal UI recognizes colon commands (and the `::` literal escape) before calling this; this only
// splits one `:skill` line into the fields of `ui.skill_load` (SessionClient.loadSkill).

export type SkillCommand = { name: string; text?: string } | { error: string };

export const SKILL_USAGE = "usage: :skill NAME [text]";

/** `line` is the whole input line; undefined when it is not a `:skill` command. */
export function parseSkillCommand(line: string): SkillCommand | undefined {
  const m = /^\s*:skill(?:\s+([\s\S]*))?$/.exec(line);
  if (!m) return undefined;
  const rest = (m[1] ?? "").replace(/^\s+/, "");
  const name = /^\S+/.exec(rest)?.[0];
  if (!name) return { error: SKILL_USAGE };
  const text = rest.slice(name.length).replace(/^[ \t]*\r?\n?/, "").replace(/^\s+/, "");
  return text.trim() === "" ? { name } : { name, text };
}
