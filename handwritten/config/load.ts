// Configuration files: YAML, validated by the generated schema; every error names the file, the
// line and the key (SPEC-configuration).
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Node } from "yaml";
import { validateHarnessConfig, validateCliConfig, type CliConfig, type GeneratedValidator, type HarnessConfig } from "../../generated/index.js";

/** Largest configuration file read; a larger one is refused before parsing. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** A problem a check beyond the schema found, at a key path of the file's value. */
export interface ValueProblem {
  readonly path: readonly string[];
  readonly message: string;
}

/**
 * Reads, parses and validates one YAML configuration file; undefined when it does not exist. Errors
 * name the file, the line and the key, for the schema's findings and for `check`'s alike.
 * The YAML parser is loaded only when a configuration file exists (start-up time of a bare session).
 */
export async function loadConfigFile<T>(file: string, validate: GeneratedValidator, check?: (value: T) => ValueProblem | undefined): Promise<T | undefined> {
  let text: string;
  try {
    const bytes = readFileSync(file);
    if (bytes.length > MAX_CONFIG_BYTES) throw new ConfigError(`${file}: larger than ${MAX_CONFIG_BYTES} bytes`);
    text = bytes.toString("utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  const { LineCounter, parseDocument, isMap, isSeq } = await import("yaml");
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const pos = lines.linePos(e.pos[0]);
    throw new ConfigError(`${file}:${pos.line}: invalid YAML: ${e.message.split("\n")[0]}`);
  }
  const value: unknown = doc.toJS() ?? {};
  if (!validate(value)) {
    const err = validate.errors?.[0];
    const path = (err?.instancePath ?? "").split("/").filter(Boolean);
    const node = nodeAt(doc.contents as Node | null, path, isMap, isSeq);
    const line = node?.range ? lines.linePos(node.range[0]).line : 1;
    const key = path.length > 0 ? path.join(".") : "(top level)";
    throw new ConfigError(`${file}:${line}: ${key}: ${describe(err)}`);
  }
  const problem = check?.(value as T);
  if (problem !== undefined) {
    const node = nodeAt(doc.contents as Node | null, problem.path, isMap, isSeq);
    const line = node?.range ? lines.linePos(node.range[0]).line : 1;
    throw new ConfigError(`${file}:${line}: ${problem.path.join(".") || "(top level)"}: ${problem.message}`);
  }
  return value as T;
}

/** Sealed schemas report a stray key as `not` (or `unevaluatedProperties`): say what it means. */
function describe(err: { keyword: string; message?: string } | undefined): string {
  if (!err) return "invalid";
  return err.keyword === "not" || err.keyword === "unevaluatedProperties" ? "unknown key" : (err.message ?? "invalid");
}

/** A YAML collection node, as far as finding a child needs. */
interface Collection {
  get(key: unknown, keepScalar: boolean): unknown;
}

function nodeAt(node: Node | null, path: readonly string[], isMap: (n: unknown) => n is Collection, isSeq: (n: unknown) => n is Collection): Node | null {
  let cur: Node | null = node;
  for (const seg of path) {
    if (isMap(cur)) cur = (cur.get(seg, true) as Node | undefined) ?? cur;
    else if (isSeq(cur)) cur = (cur.get(Number(seg), true) as Node | undefined) ?? cur;
    else break;
  }
  return cur;
}

/** Most drop-in files read from one `*.d/` folder. */
export const MAX_DROP_INS = 64;

/**
 * Layers, later winning: `<config>/harness.yaml`, then `<config>/harness.d/*.yaml` in name order,
 * then `--harness-config KEY=VALUE` overrides. Maps merge key by key; `extensions` merge by `name`
 * (a later entry replaces an earlier one of the same name); other lists are replaced whole. Each
 * file is validated on its own (errors name file, line and key), and so is the merged result.
 */
export async function loadHarnessConfig(configRoot: string, overrides: readonly string[] = []): Promise<HarnessConfig> {
  const layers: Array<Record<string, unknown>> = [];
  const base = await loadConfigFile<Record<string, unknown>>(join(configRoot, "harness.yaml"), validateHarnessConfig);
  if (base) layers.push(base);
  for (const file of dropIns(join(configRoot, "harness.d"))) {
    const layer = await loadConfigFile<Record<string, unknown>>(file, validateHarnessConfig);
    if (layer) layers.push(layer);
  }
  for (const o of overrides) layers.push(await parseOverride(o));
  const merged = layers.reduce<Record<string, unknown>>((acc, layer) => mergeLayer(acc, layer), {});
  if (!validateHarnessConfig(merged)) {
    const err = validateHarnessConfig.errors?.[0];
    const key = (err?.instancePath ?? "").split("/").filter(Boolean).join(".") || "(top level)";
    throw new ConfigError(`merged harness configuration (after drop-ins and --harness-config): ${key}: ${describe(err)}`);
  }
  return merged as HarnessConfig;
}

function dropIns(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const files = names.filter((n) => /\.ya?ml$/.test(n) && !n.startsWith(".")).sort();
  if (files.length > MAX_DROP_INS) throw new ConfigError(`${dir}: more than ${MAX_DROP_INS} drop-in files`);
  return files.map((n) => join(dir, n));
}

/** `KEY=VALUE` with a dotted KEY (`debug_log.retention_days=3`); VALUE is a YAML scalar or flow value. */
async function parseOverride(text: string): Promise<Record<string, unknown>> {
  const eq = text.indexOf("=");
  const key = eq > 0 ? text.slice(0, eq) : "";
  if (!/^[a-z_]+(\.[a-z_]+)*$/.test(key)) {
    throw new ConfigError(`--harness-config ${JSON.stringify(text.slice(0, 80))}: expected KEY=VALUE with a dotted lowercase KEY`);
  }
  const { parse } = await import("yaml");
  let value: unknown;
  try {
    value = parse(text.slice(eq + 1));
  } catch {
    throw new ConfigError(`--harness-config ${key}: the value is not valid YAML`);
  }
  const layer: Record<string, unknown> = {};
  let cur = layer;
  const parts = key.split(".");
  parts.forEach((p, i) => {
    if (i === parts.length - 1) cur[p] = value;
    else cur = (cur[p] = {}) as Record<string, unknown>;
  });
  if (!validateHarnessConfig(layer)) {
    const err = validateHarnessConfig.errors?.[0];
    throw new ConfigError(`--harness-config ${key}: ${describe(err)}`);
  }
  return layer;
}

function isPlainMap(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function mergeLayer(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    if (k === "extensions" && Array.isArray(prev) && Array.isArray(v)) {
      const byName = new Map<string, unknown>();
      for (const e of [...prev, ...v]) byName.set(String((e as { name?: unknown }).name), e);
      out[k] = [...byName.values()];
    } else if (isPlainMap(prev) && isPlainMap(v)) {
      out[k] = mergeLayer(prev, v);
    } else {
      out[k] = v;
    }
  }
  return out;
}

/**
 * `<config>/cli.yaml`, the interactive UI's settings, validated like harness.yaml (file, line and
 * key on every error; unknown keys refused); a `theme` must name a theme file in `themes/` (or be
 * `default`), so a typo is reported at start instead of silently ignored. `check` is the caller's
 * own check of the valid value (the UI's key bindings), reported with file, line and key alike.
 */
export async function loadCliConfig(configRoot: string, check?: (value: CliConfig) => ValueProblem | undefined): Promise<CliConfig> {
  const themes = join(configRoot, "themes");
  const checkTheme = (value: CliConfig): ValueProblem | undefined => {
    if (value.theme === undefined || value.theme === "default") return check?.(value);
    let names: string[] = [];
    try {
      names = readdirSync(themes).filter((n) => /\.(ya?ml|json)$/.test(n)).map((n) => n.replace(/\.(ya?ml|json)$/, ""));
    } catch {
      // no themes folder: only the default theme
    }
    if (names.includes(value.theme)) return check?.(value);
    return { path: ["theme"], message: `no theme ${JSON.stringify(value.theme)}; themes: ${["default", ...names.sort()].join(", ")} (theme files live in ${themes})` };
  };
  return (await loadConfigFile<CliConfig>(join(configRoot, "cli.yaml"), validateCliConfig, checkTheme)) ?? {};
}
