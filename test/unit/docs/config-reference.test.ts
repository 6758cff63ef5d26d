// The configuration reference of the docs site, from the configuration schemas: every example,
// put together, is a valid file; every default the schemas state is the one the code applies.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { configKeys, yamlSnippet } from "../../../codegen/docs/config-keys.js";
import { validateCliConfig, validateHarnessConfig, validateSandboxConfig, type GeneratedValidator } from "../../../generated/index.js";
import { KEY_ACTIONS, resolveBindings } from "../../../handwritten/cli/tui/bindings.js";
import { DEFAULT_STARTUP_TIMEOUT_SECONDS } from "../../../handwritten/host/limits.js";
import { DEBUG_LOG_RETENTION_MS } from "../../../handwritten/store/limits.js";
import { DEFAULT_COMPACTION } from "../../../handwritten/harness/compactor.js";
import { REPO_ROOT } from "../../support/paths.js";

type Json = Record<string, unknown>;
const SCHEMAS = join(REPO_ROOT, "generated", "schemas");
const schemas = new Map<string, Json>(readdirSync(SCHEMAS).filter((f) => f.endsWith(".json")).map((f) => [f, JSON.parse(readFileSync(join(SCHEMAS, f), "utf8")) as Json]));
const root = (file: string) => [...schemas.values()].find((s) => s["x-tau-config"] === file) as Json;
const VALIDATORS: Record<string, GeneratedValidator> = { "harness.yaml": validateHarnessConfig, "cli.yaml": validateCliConfig, "sandbox.yaml": validateSandboxConfig };

/** Merges b into a: maps key by key, the first entries of lists into one entry. */
function merge(a: unknown, b: unknown): unknown {
  if (Array.isArray(a) && Array.isArray(b)) return [merge(a[0], b[0])];
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null && !Array.isArray(a) && !Array.isArray(b)) {
    const out: Json = { ...(a as Json) };
    for (const [k, v] of Object.entries(b as Json)) out[k] = k in out ? merge(out[k], v) : v;
    return out;
  }
  return b ?? a;
}

describe("the configuration reference", () => {
  it("[docs.config.examples-valid] every key of every file has an example, and all of a file's examples together make a valid file", () => {
    for (const [file, validate] of Object.entries(VALIDATORS)) {
      const keys = configKeys(root(file), schemas);
      expect(keys.length, file).toBeGreaterThan(5);
      let doc: unknown = {};
      for (const k of keys) {
        if (k.section) continue;
        const value = k.example ?? k.default;
        expect(value, `${file}: ${k.path} has neither an example nor a default`).not.toBeUndefined();
        doc = merge(doc, parse(yamlSnippet(k.path, value)));
      }
      const ok = validate(doc);
      expect(ok ? [] : validate.errors, `${file}:\n${JSON.stringify(doc, null, 2)}`).toEqual([]);
      if (file === "cli.yaml") expect("path" in resolveBindings((doc as { keys: never }).keys)).toBe(false);
    }
  });

  it("[docs.config.defaults-match-code] the defaults the schemas state are the ones the code applies", () => {
    const defaults = (file: string) => new Map(configKeys(root(file), schemas).filter((k) => k.default !== undefined).map((k) => [k.path, k.default]));
    const cli = defaults("cli.yaml");
    for (const a of KEY_ACTIONS) expect(cli.get(`keys.${a.action}`), a.action).toBe(a.default);
    expect(cli.get("theme")).toBe("default");
    const harness = defaults("harness.yaml");
    expect(harness.get("extensions[].startup_timeout_seconds")).toBe(DEFAULT_STARTUP_TIMEOUT_SECONDS);
    expect(harness.get("debug_log.retention_days")).toBe(DEBUG_LOG_RETENTION_MS / 86_400_000);
    expect(harness.get("compaction.auto_threshold")).toBe(DEFAULT_COMPACTION.autoThreshold);
    expect(harness.get("compaction.keep_recent_tokens")).toBe(DEFAULT_COMPACTION.keepRecentTokens);
  });
});
