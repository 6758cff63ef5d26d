// sandbox.yaml (SPEC-sandbox): the global file, then the project's `.tau/sandbox.yaml` for a trusted
// project only, or one `--sandbox-config FILE` instead of both. Maps merge key by key, lists replace
// whole; `~` and `$VAR` are expanded in paths; control characters and unset variables are errors
// that name the file, the line and the key. Project trust is a line in `<config>/trusted-projects`.
import { appendFileSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { validateSandboxConfig, type SandboxConfig } from "../../generated/index.js";
import { hostEntryProblem } from "./hosts.js";
import { ConfigError, loadConfigFile, mergeLayer, type ValueProblem } from "./load.js";

export type SandboxLayer = "default" | "global" | "project" | "override" | "session";

export interface SandboxConfigFile {
  readonly path: string;
  readonly layer: Exclude<SandboxLayer, "default" | "session">;
  readonly status: "loaded" | "missing" | "skipped-untrusted" | "error";
  readonly error?: string;
}

export interface LoadedSandboxConfig {
  /** The merged configuration, paths expanded and absolute. */
  readonly config: SandboxConfig;
  /** Which layer set each key (`enabled`, `mode`, `network.allowed_domains`, …). */
  readonly origins: Readonly<Record<string, SandboxLayer>>;
  readonly files: readonly SandboxConfigFile[];
  readonly warnings: readonly string[];
}

/** The file that records trusted projects, one absolute real path a line. */
export const TRUSTED_PROJECTS_FILE = "trusted-projects";

const PATH_LISTS = ["deny_read", "allow_read", "allow_write", "deny_write"] as const;

function realOrResolved(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}

export function projectTrusted(configRoot: string, projectRoot: string): boolean {
  let text: string;
  try {
    text = readFileSync(join(configRoot, TRUSTED_PROJECTS_FILE), "utf8");
  } catch {
    return false;
  }
  const project = realOrResolved(projectRoot);
  return text.split("\n").some((line) => line.trim() !== "" && realOrResolved(line.trim()) === project);
}

/** Records `projectRoot` as trusted (its real path); a no-op when it already is. */
export function trustProject(configRoot: string, projectRoot: string): string {
  const project = realOrResolved(projectRoot);
  if (/[\u0000-\u001f\u007f]/.test(project)) throw new ConfigError(`${project}: a path with a control character cannot be recorded`);
  if (!projectTrusted(configRoot, project)) {
    mkdirSync(configRoot, { recursive: true, mode: 0o700 });
    appendFileSync(join(configRoot, TRUSTED_PROJECTS_FILE), `${project}\n`, { mode: 0o600 });
  }
  return project;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The first string of `value` with a control character, by key path. */
function controlCharacter(value: unknown, path: string[] = []): ValueProblem | undefined {
  if (typeof value === "string") return CONTROL.test(value) ? { path, message: "contains a control character" } : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = controlCharacter(value[i], [...path, String(i)]);
      if (p) return p;
    }
  } else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const p = controlCharacter(v, [...path, k]);
      if (p) return p;
    }
  }
  return undefined;
}

/** The first network entry that is not a host entry (config/hosts.ts), by key path. */
function hostsProblem(config: SandboxConfig): ValueProblem | undefined {
  for (const [key, list] of [["allowed_domains", "allow"], ["denied_domains", "deny"]] as const) {
    const entries = config.network?.[key] ?? [];
    for (let i = 0; i < entries.length; i++) {
      const problem = hostEntryProblem(entries[i] as string, list);
      if (problem !== undefined) return { path: ["network", key, String(i)], message: problem };
    }
  }
  return undefined;
}

/** `~`, `~/x`, `$VAR`, `${VAR}` expanded; relative paths resolved from `base`. Throws on an unset variable. */
export function expandPath(text: string, base: string, env: NodeJS.ProcessEnv): string {
  let out = text === "~" ? homedir() : text.startsWith("~/") ? join(homedir(), text.slice(2)) : text;
  out = out.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, braced: string | undefined, bare: string | undefined) => {
    const name = (braced ?? bare) as string;
    const value = env[name];
    if (value === undefined || value === "") throw new Error(`$${name} is not set`);
    return value;
  });
  return isAbsolute(out) ? resolve(out) : resolve(base, out);
}

function expandFile(config: SandboxConfig, base: string, env: NodeJS.ProcessEnv): { config: SandboxConfig; problem?: ValueProblem } {
  const fs = config.filesystem;
  if (fs === undefined) return { config };
  const out: Record<string, string[]> = {};
  for (const key of PATH_LISTS) {
    const list = fs[key];
    if (list === undefined) continue;
    const expanded: string[] = [];
    for (let i = 0; i < list.length; i++) {
      try {
        expanded.push(expandPath(list[i] as string, base, env));
      } catch (err) {
        return { config, problem: { path: ["filesystem", key, String(i)], message: (err as Error).message } };
      }
    }
    out[key] = expanded;
  }
  return { config: { ...config, filesystem: { ...fs, ...out } } };
}

async function loadLayer(file: string, base: string, env: NodeJS.ProcessEnv): Promise<SandboxConfig | undefined> {
  let expanded: SandboxConfig | undefined;
  const value = await loadConfigFile<SandboxConfig>(file, validateSandboxConfig, (v) => {
    const control = controlCharacter(v) ?? hostsProblem(v);
    if (control) return control;
    const e = expandFile(v, base, env);
    expanded = e.config;
    return e.problem;
  });
  return value === undefined ? undefined : expanded;
}

function recordOrigins(origins: Record<string, SandboxLayer>, layer: SandboxConfig, name: SandboxLayer): void {
  for (const [k, v] of Object.entries(layer)) {
    if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      for (const sub of Object.keys(v)) origins[`${k}.${sub}`] = name;
    } else origins[k] = name;
  }
}

export interface SandboxConfigSources {
  readonly configRoot: string;
  readonly projectRoot: string;
  /** `--sandbox-config FILE`: replaces the global and the project file. */
  readonly overrideFile?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Loads the sandbox configuration's layers. An error in any file that applies throws ConfigError
 * (file:line: key: problem); the caller blocks the sandbox with it. A named override file that does
 * not exist is an error too.
 */
export async function loadSandboxConfig(s: SandboxConfigSources): Promise<LoadedSandboxConfig> {
  const env = s.env ?? process.env;
  const files: SandboxConfigFile[] = [];
  const warnings: string[] = [];
  const origins: Record<string, SandboxLayer> = {};
  const layers: Array<[SandboxConfig, SandboxLayer]> = [];
  const take = async (path: string, layer: SandboxConfigFile["layer"], base: string, required: boolean): Promise<void> => {
    let config: SandboxConfig | undefined;
    try {
      config = await loadLayer(path, base, env);
    } catch (err) {
      files.push({ path, layer, status: "error", error: (err as Error).message });
      throw err;
    }
    if (config === undefined) {
      files.push({ path, layer, status: "missing" });
      if (required) throw new ConfigError(`${path}: --sandbox-config names a file that does not exist`);
      return;
    }
    files.push({ path, layer, status: "loaded" });
    layers.push([config, layer]);
  };
  if (s.overrideFile !== undefined) {
    const path = resolve(s.overrideFile);
    await take(path, "override", s.projectRoot, true);
  } else {
    await take(join(s.configRoot, "sandbox.yaml"), "global", s.projectRoot, false);
    const projectFile = join(s.projectRoot, ".tau", "sandbox.yaml");
    if (projectTrusted(s.configRoot, s.projectRoot)) await take(projectFile, "project", s.projectRoot, false);
    else {
      let exists = false;
      try {
        readFileSync(projectFile);
        exists = true;
      } catch {
        // absent: nothing to skip
      }
      if (exists) {
        files.push({ path: projectFile, layer: "project", status: "skipped-untrusted" });
        warnings.push(`${projectFile} ignored: this project is not trusted (:sandbox trust records it in ${join(s.configRoot, TRUSTED_PROJECTS_FILE)})`);
      }
    }
  }
  let merged: Record<string, unknown> = {};
  for (const [layer, name] of layers) {
    merged = mergeLayer(merged, layer as Record<string, unknown>);
    recordOrigins(origins, layer, name);
  }
  return { config: merged as SandboxConfig, origins, files, warnings };
}

/**
 * Remembers the automatic reviewer in the global `<config>/sandbox.yaml` (`:sandbox classifier …
 * --global`, SPEC-sandbox-reviewer "Selection"): sets `classifier` (a model, or false) or removes it
 * (undefined), keeping the rest of the file and its comments; written whole through a temporary file.
 * A file that does not parse is refused, never rewritten. Returns the file's path.
 */
export async function rememberClassifier(configRoot: string, value: string | false | undefined): Promise<string> {
  const { parseDocument, isMap } = await import("yaml");
  const path = join(configRoot, "sandbox.yaml");
  let text = "";
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw new ConfigError(`${path}: ${(err as Error).message}`);
  }
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new ConfigError(`${path} does not parse (${doc.errors[0]?.message.split("\n")[0] ?? "invalid YAML"}); correct it first`);
  if (doc.contents !== null && !isMap(doc.contents)) throw new ConfigError(`${path} is not a map of settings; correct it first`);
  if (value === undefined) doc.delete("classifier");
  else doc.set("classifier", value);
  mkdirSync(configRoot, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, doc.contents === null && value === undefined ? "" : doc.toString(), { mode: 0o600 });
  renameSync(tmp, path);
  return path;
}
