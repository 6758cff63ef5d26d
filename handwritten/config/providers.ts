// Named provider profiles (SPEC-configuration): `tau provider add NAME` writes the profile as the
// drop-in `<config>/harness.d/provider-NAME.yaml` and its key as the secret `provider-NAME`
// (`<config>/secrets/provider-NAME`, 0600). Each profile runs as a provider extension instance
// called NAME, so its models are addressed as `NAME/model`.
import { dropInPath, removeDropIn, writeDropIn } from "./drop-ins.js";
import type { ExtensionConfig, HarnessConfig, ProviderEndpoint, ProviderProfile } from "../../generated/index.js";
import { ConfigError } from "./load.js";
import { SecretError, readSecret } from "./secrets.js";

/** Profile names: instance names, minus the first-party defaults they would shadow. */
export const PROFILE_NAME = /^[a-z][a-z0-9_-]{0,47}$/;
export const RESERVED_PROFILE_NAMES: ReadonlySet<string> = new Set(["provider", "shell"]);
/** Most profiles a configuration may hold (each one is a process). */
export const MAX_PROFILES = 32;

export function profileNameProblem(name: string): string | undefined {
  if (!PROFILE_NAME.test(name)) return `profile name ${JSON.stringify(name.slice(0, 80))} must be lowercase letters, digits, '-' or '_' (at most 48, starting with a letter)`;
  if (RESERVED_PROFILE_NAMES.has(name)) return `profile name "${name}" is reserved for a default extension`;
  return undefined;
}

export function profileSecretName(name: string): string {
  return `provider-${name}`;
}

export function profileDropInPath(configRoot: string, name: string): string {
  return dropInPath(configRoot, `provider-${name}.yaml`);
}

/** The profiles of a loaded configuration, in name order, with their names checked. */
export function profilesOf(config: HarnessConfig): Array<[string, ProviderProfile]> {
  const entries = Object.entries(config.providers ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length > MAX_PROFILES) throw new ConfigError(`providers: more than ${MAX_PROFILES} profiles`);
  for (const [name] of entries) {
    const problem = profileNameProblem(name);
    if (problem) throw new ConfigError(`providers.${name.slice(0, 80)}: ${problem}`);
  }
  return entries;
}

/** The provider extension a profile runs as. The key travels only as a secret name. */
export function profileExtension(name: string, p: ProviderProfile): ExtensionConfig {
  return {
    name,
    kind: "provider",
    require: true,
    command: ["tau", "ext", "provider"],
    startup_timeout_seconds: 30,
    config: {
      profile: p.api ?? "chat_completions",
      base_url: p.base_url,
      models: p.models.map((id) => ({ id })),
      ...(p.api_key_secret ? { api_key_secret: p.api_key_secret } : {}),
      ...(p.reasoning_replay ? { reasoning_replay: p.reasoning_replay } : {}),
      ...(p.list_models === false ? { list_models: false } : {}),
      // chatgpt_ws reads its sign-in's tokens itself (they are refreshed and written back): only the file's name travels
      ...(p.api === "chatgpt_ws" ? { oauth_secret: `provider-${name}-oauth`, ...(p.auth_url ? { auth_url: p.auth_url } : {}) } : {}),
    },
    ...(p.api_key_secret ? { secrets: [p.api_key_secret] } : {}),
  };
}

/**
 * What a provider extension's configuration says of where its rounds go (`agent.prompt_started`'s
 * `provider`, SPEC-trace-export "otlp"): for tau's own provider extension its profile and its base
 * URL's host and port (its scheme's default when the URL names none); for any other, the instance.
 */
export function providerEndpoint(ext: ExtensionConfig): ProviderEndpoint {
  const [program, sub, name] = ext.command;
  if (program !== "tau" || sub !== "ext" || name !== "provider") return { instance: ext.name };
  const config = (ext.config ?? {}) as { profile?: unknown; base_url?: unknown };
  const api = typeof config.profile === "string" ? config.profile : "scripted";
  let url: URL | undefined;
  try {
    url = typeof config.base_url === "string" ? new URL(config.base_url) : undefined;
  } catch {
    url = undefined;
  }
  if (api === "scripted" || url === undefined || url.hostname === "") return { instance: ext.name, api };
  const port = url.port !== "" ? Number(url.port) : url.protocol === "http:" || url.protocol === "ws:" ? 80 : 443;
  // A bracketed IPv6 literal is the address without its brackets.
  return { instance: ext.name, api, server_address: url.hostname.replace(/^\[(.*)\]$/, "$1"), server_port: port };
}

/**
 * Where new agents' model comes from when they name none (SPEC-configuration, "Which endpoint
 * answers"): the configuration's `model`; else, with OPENAI_BASE_URL set, the default `provider`
 * instance; else the first profile in name order. A provider instance answers with its own default,
 * the first model it declares (SPEC-provider-chat-completions, "The default model").
 */
export function sessionDefault(config: HarnessConfig, env: NodeJS.ProcessEnv): { model?: string; provider?: string } {
  if (config.model) return { model: config.model };
  if (env.OPENAI_BASE_URL) return { provider: "provider" };
  const first = profilesOf(config)[0];
  return first ? { provider: first[0] } : {};
}

/**
 * Checks that no profile shares its name with a configured extension and that every profile's key can be read (present, a regular file, mode at most 0600), so a
 * mistake is reported before a daemon starts. A `TAU_SECRET_<NAME>` variable stands in for the file.
 */
export function checkProfileSecrets(config: HarnessConfig, configRoot: string, env: NodeJS.ProcessEnv): void {
  const extensionNames = new Set((config.extensions ?? []).map((e) => e.name));
  for (const [name, p] of profilesOf(config)) {
    if (extensionNames.has(name)) throw new ConfigError(`providers.${name}: an extension of the same name is already configured`);
    const secret = p.api_key_secret;
    if (!secret) continue;
    if (env[`TAU_SECRET_${secret.toUpperCase().replace(/-/g, "_")}`] !== undefined) continue;
    let value: string | undefined;
    try {
      value = readSecret(configRoot, secret);
    } catch (err) {
      if (err instanceof SecretError) throw new ConfigError(`provider profile ${name}: ${err.message}`);
      throw err;
    }
    if (value === undefined) {
      throw new ConfigError(`provider profile ${name}: its key (secret ${secret}) is missing; run \`tau provider add ${name} --force …\` to store it again`);
    }
  }
}

/** Writes the profile's drop-in atomically (0600), validated by the generated schema first. */
export async function writeProfileDropIn(configRoot: string, name: string, p: ProviderProfile): Promise<string> {
  const problem = profileNameProblem(name);
  if (problem) throw new ConfigError(problem);
  const header = `# Written by \`tau provider add ${name}\`; remove with \`tau provider remove ${name}\`.\n# The key is in secrets/${p.api_key_secret ?? "(none)"} (mode 0600), never in this file.\n`;
  return writeDropIn(configRoot, `provider-${name}.yaml`, { providers: { [name]: p } }, header);
}

export function removeProfileDropIn(configRoot: string, name: string): boolean {
  return removeDropIn(configRoot, `provider-${name}.yaml`);
}
