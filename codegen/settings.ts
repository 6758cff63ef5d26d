// The settings of tau's first-party extensions (spec/extension-settings.tsp, `x-tau-settings`):
// one schema per extension under handwritten/extensions/, rendered as generated/settings.ts — the
// settings' type by extension name and the validator its SDK checks them with.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { JsonSchema } from "./typespec.js";
import type { Problems } from "./errors.js";
import { typeNameOf } from "./typescript.js";

export interface SettingsEntry {
  /** The extension's name (`tau ext NAME`, handwritten/extensions/NAME/). */
  readonly extension: string;
  readonly model: string;
}

/** Every declared settings model; each first-party extension must have exactly one. */
export function buildSettings(root: string, schemas: Map<string, JsonSchema>, problems: Problems): SettingsEntry[] {
  const out: SettingsEntry[] = [];
  const seen = new Map<string, string>();
  for (const [id, schema] of schemas) {
    const name = schema["x-tau-settings"];
    if (name === undefined) continue;
    const model = typeNameOf(id);
    if (typeof name !== "string" || name === "") {
      problems.add(`spec/ (model ${model})`, "x-tau-settings must name a first-party extension");
      continue;
    }
    const twice = seen.get(name);
    if (twice !== undefined) problems.add(`spec/ (model ${model})`, `the settings of extension ${name} are already declared by ${twice}`);
    seen.set(name, model);
    out.push({ extension: name, model });
  }
  const dir = join(root, "handwritten", "extensions");
  const folders = existsSync(dir) ? readdirSync(dir).filter((n) => existsSync(join(dir, n, "main.ts"))) : [];
  for (const f of folders) {
    if (!seen.has(f)) problems.add(`handwritten/extensions/${f}/`, `extension ${f} has no settings in spec/ (a model with x-tau-settings "${f}")`);
  }
  for (const e of out) {
    if (!folders.includes(e.extension)) problems.add(`spec/ (model ${e.model})`, `x-tau-settings names ${e.extension}, which is not a first-party extension (handwritten/extensions/${e.extension}/main.ts)`);
  }
  return out.sort((a, b) => (a.extension < b.extension ? -1 : a.extension > b.extension ? 1 : 0));
}

export function emitSettings(header: string, settings: readonly SettingsEntry[]): string {
  const q = (s: string) => JSON.stringify(s);
  const lines = [header, 'import type * as T from "./types.js";', 'import * as V from "./validators.js";', 'import type { GeneratedValidator } from "./validators.js";', ""];
  lines.push("/** The settings (`config` in harness.yaml) of each first-party extension, by its name. */", "export interface ExtensionSettings {");
  for (const s of settings) lines.push(`  ${q(s.extension)}: T.${s.model};`);
  lines.push("}", "");
  lines.push("/** The validator of each first-party extension's settings. */", "export const EXTENSION_SETTINGS: { readonly [N in keyof ExtensionSettings]: GeneratedValidator } = {");
  for (const s of settings) lines.push(`  ${q(s.extension)}: V.validate${s.model},`);
  lines.push("};", "");
  return lines.join("\n");
}
