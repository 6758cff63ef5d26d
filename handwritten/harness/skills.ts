// Skills (SPEC-skills): `SKILL.md` files with YAML front matter (`name`, `description`) in
// `<config>/skills/<name>/` and `<project>/.tau/skills/<name>/`. Discovery keeps metadata only
// (name, description, path, mtime), bounded and validated; an invalid skill is diagnosed and
// skipped, never fatal. A skill's body is read when it is loaded.
import { closeSync, fstatSync, openSync, readdirSync, constants } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { nodeIo, readFully } from "../store/index.js";

/** Skill names: lowercase letters, digits and single hyphens, like the folder that holds them. */
export const SKILL_NAME = /^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,63}$/;
export const MAX_SKILL_NAME_CHARS = 64;
export const MAX_SKILL_DESCRIPTION_CHARS = 1024;
/** Largest SKILL.md read, front matter and body together. */
export const MAX_SKILL_FILE_BYTES = 256 * 1024;
/** Largest front matter block (between the `---` lines). */
export const MAX_FRONT_MATTER_BYTES = 16 * 1024;
/** Most skill folders looked at per root; the rest are diagnosed once. */
export const MAX_SKILLS_PER_ROOT = 128;
/** Most diagnostics kept per scan. */
export const MAX_SKILL_PROBLEMS = 32;

export type SkillSource = "user" | "project" | "extension";

export interface Skill {
  readonly name: string;
  readonly description: string;
  readonly path: string;
  readonly source: SkillSource;
  readonly mtimeMs: number;
}

export interface SkillScan {
  /** In name order; a project skill replaces a user skill of the same name. */
  readonly skills: readonly Skill[];
  readonly problems: readonly string[];
}

export const EMPTY_SCAN: SkillScan = Object.freeze({ skills: [], problems: [] });

export function skillRoots(configRoot: string | undefined, projectRoot: string): Array<{ dir: string; source: SkillSource }> {
  return [...(configRoot ? [{ dir: join(configRoot, "skills"), source: "user" as const }] : []), { dir: join(projectRoot, ".tau", "skills"), source: "project" as const }];
}

/** Scans both roots once. Never throws: unreadable folders and invalid files become problems. */
export function discoverSkills(configRoot: string | undefined, projectRoot: string): SkillScan {
  const byName = new Map<string, Skill>();
  const problems: string[] = [];
  const problem = (p: string) => {
    if (problems.length < MAX_SKILL_PROBLEMS) problems.push(p);
  };
  for (const { dir, source } of skillRoots(configRoot, projectRoot)) {
    let names: string[];
    try {
      names = readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isDirectory() || d.isSymbolicLink())
        .map((d) => d.name)
        .filter((n) => !n.startsWith("."))
        .sort();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") problem(`${dir}: cannot list skills (${code ?? "error"})`);
      continue;
    }
    if (names.length > MAX_SKILLS_PER_ROOT) {
      problem(`${dir}: ${names.length} skill folders; only the first ${MAX_SKILLS_PER_ROOT} in name order are read`);
      names = names.slice(0, MAX_SKILLS_PER_ROOT);
    }
    for (const folder of names) {
      const path = join(dir, folder, "SKILL.md");
      const read = readBounded(path, MAX_SKILL_FILE_BYTES);
      if ("problem" in read) {
        if (read.problem !== "absent") problem(`${path}: ${read.problem}`);
        continue;
      }
      const parsed = parseSkillFile(read.text);
      if ("problem" in parsed) {
        problem(`${path}: ${parsed.problem}`);
        continue;
      }
      if (parsed.name !== folder) {
        problem(`${path}: name "${parsed.name}" differs from its folder "${folder.slice(0, 80)}"`);
        continue;
      }
      const prev = byName.get(parsed.name);
      if (prev) problem(`${path}: replaces the ${prev.source} skill "${prev.name}" (${prev.path})`);
      byName.set(parsed.name, { name: parsed.name, description: parsed.description, path, source, mtimeMs: read.mtimeMs });
    }
  }
  const skills = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { skills, problems };
}

export type ParsedSkill = { name: string; description: string; body: string } | { problem: string };

/** Splits and validates front matter; the body is what follows the closing `---` line. */
export function parseSkillFile(text: string): ParsedSkill {
  const src = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const open = /^---[ \t]*\r?\n/.exec(src);
  if (!open) return { problem: "does not start with a `---` front matter block" };
  const rest = src.slice(open[0].length);
  const close = /^---[ \t]*(?:\r?\n|$)/m.exec(rest);
  if (!close) return { problem: "the front matter block is not closed by a `---` line" };
  const yamlText = rest.slice(0, close.index);
  if (Buffer.byteLength(yamlText) > MAX_FRONT_MATTER_BYTES) return { problem: `front matter larger than ${MAX_FRONT_MATTER_BYTES} bytes` };
  let meta: unknown;
  try {
    meta = yaml().parse(yamlText, { maxAliasCount: 16 });
  } catch (err) {
    return { problem: `invalid front matter YAML: ${String((err as Error).message).split("\n")[0]?.slice(0, 200)}` };
  }
  if (typeof meta !== "object" || meta === null || Array.isArray(meta)) return { problem: "front matter is not a map" };
  const { name, description } = meta as Record<string, unknown>;
  if (typeof name !== "string" || name === "") return { problem: "front matter has no `name`" };
  if (name.length > MAX_SKILL_NAME_CHARS || !SKILL_NAME.test(name)) {
    return { problem: `name ${JSON.stringify(name.slice(0, 80))} must be 1–${MAX_SKILL_NAME_CHARS} lowercase letters, digits and single hyphens` };
  }
  if (typeof description !== "string" || description.trim() === "") return { problem: "front matter has no `description`" };
  if (description.length > MAX_SKILL_DESCRIPTION_CHARS) return { problem: `description longer than ${MAX_SKILL_DESCRIPTION_CHARS} characters` };
  const body = rest.slice(close.index + close[0].length).replace(/^\r?\n/, "");
  return { name, description: oneLine(description), body };
}

/** Reads a skill's current body for loading (the file may have changed since discovery). */
export function loadSkillBody(skill: Skill): { body: string } | { problem: string } {
  const read = readBounded(skill.path, MAX_SKILL_FILE_BYTES);
  if ("problem" in read) return { problem: read.problem === "absent" ? "its SKILL.md no longer exists" : read.problem };
  const parsed = parseSkillFile(read.text);
  if ("problem" in parsed) return { problem: parsed.problem };
  return { body: parsed.body.trimEnd() };
}

/** The prompt a skill load submits: the skill's instructions, then the user's own text if any. */
export function skillPromptText(skill: Skill, body: string, extra: string | undefined): string {
  const head = `<skill name="${skill.name}" path="${skill.path.replaceAll('"', "%22")}">\n${body}\n</skill>`;
  return extra !== undefined && extra.trim() !== "" ? `${head}\n\n${extra}` : head;
}

/** The system prompt's skill listing (the `{{skills}}` template input); empty without skills. */
export function renderSkillListing(skills: readonly Skill[]): string {
  if (skills.length === 0) return "";
  const lines = skills.map((s) => `- ${s.name}: ${s.description} (${s.path})`);
  return [
    "<skills>",
    "Skills are instructions for particular tasks, each in a SKILL.md file. When a task matches a skill's description, read its file before you start. The user loads one with `:skill NAME`.",
    ...lines,
    "</skills>",
  ].join("\n");
}

function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").replace(/ {2,}/g, " ").trim();
}

type Bounded = { text: string; mtimeMs: number } | { problem: string };

function readBounded(path: string, max: number): Bounded {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { problem: code === "ENOENT" || code === "ENOTDIR" ? "absent" : `cannot read (${code ?? "error"})` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { problem: "not a regular file" };
    if (st.size > max) return { problem: `larger than ${max} bytes` };
    const buf = Buffer.alloc(st.size);
    const got = readFully(nodeIo, fd, buf, 0);
    return { text: buf.subarray(0, got).toString("utf8"), mtimeMs: st.mtimeMs };
  } catch (err) {
    return { problem: `cannot read (${(err as NodeJS.ErrnoException).code ?? "error"})` };
  } finally {
    closeSync(fd);
  }
}

// The YAML parser is loaded only when a SKILL.md is found (start-up time of a bare session).
let yamlModule: typeof import("yaml") | undefined;
function yaml(): typeof import("yaml") {
  yamlModule ??= createRequire(import.meta.url)("yaml") as typeof import("yaml");
  return yamlModule;
}
