// Configuration files: YAML, validated by the generated schema; every error names the file, the
// line and the key (SPEC-configuration).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Node } from "yaml";
import { validateHarnessConfig, validateCliConfig, type CliConfig, type GeneratedValidator, type HarnessConfig } from "../../generated/index.js";

/** Largest configuration file read; a larger one is refused before parsing. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

export class ConfigError extends Error {
  override name = "ConfigError";
}

// The YAML parser is loaded only when a configuration file exists (start-up time of a bare session).
async function load<T>(file: string, validate: GeneratedValidator): Promise<T | undefined> {
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
    const extra = err?.keyword === "unevaluatedProperties" ? "unknown key" : (err?.message ?? "invalid");
    throw new ConfigError(`${file}:${line}: ${key}: ${extra}`);
  }
  return value as T;
}

function nodeAt(node: Node | null, path: readonly string[], isMap: (n: unknown) => boolean, isSeq: (n: unknown) => boolean): Node | null {
  let cur: Node | null = node;
  for (const seg of path) {
    const coll = cur as unknown as { get(key: unknown, keepScalar: boolean): unknown };
    if (isMap(cur)) cur = (coll.get(seg, true) as Node | undefined) ?? cur;
    else if (isSeq(cur)) cur = (coll.get(Number(seg), true) as Node | undefined) ?? cur;
    else break;
  }
  return cur;
}

/** `<config>/harness.yaml`, or an empty configuration when it does not exist. */
export async function loadHarnessConfig(configRoot: string): Promise<HarnessConfig> {
  return (await load<HarnessConfig>(join(configRoot, "harness.yaml"), validateHarnessConfig)) ?? {};
}

export async function loadCliConfig(configRoot: string): Promise<CliConfig> {
  return (await load<CliConfig>(join(configRoot, "cli.yaml"), validateCliConfig)) ?? {};
}
