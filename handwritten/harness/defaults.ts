// What a session runs when harness.yaml configures no extensions: the first-party provider and
// shell extensions. The provider talks to OPENAI_BASE_URL when it is set, to OpenAI's own endpoint
// when only an OpenAI key is (as other coding agents do), and is otherwise the clearly labelled
// offline demo (`scripted`), so `tau run` works on a fresh machine.
import type { ExtensionConfig, GmailConfig, HarnessConfig, SandboxLaunch, WebConfig } from "../../generated/index.js";
import { ConfigError, mcpExtension, profileExtension, profilesOf, type McpServers } from "../config/index.js";

export const OPENAI_KEY_SECRET = "openai-api-key";
/** Where an OpenAI key goes when OPENAI_BASE_URL names no endpoint: OpenAI's own. */
export const OPENAI_OWN_BASE_URL = "https://api.openai.com/v1";
/**
 * The model used at OpenAI's own endpoint without OPENAI_MODEL: its listing's first entry may be an
 * embedding or audio model, so the default is named rather than taken from the list.
 */
export const OPENAI_OWN_DEFAULT_MODEL = "gpt-5";

export function defaultExtensions(env: NodeJS.ProcessEnv): ExtensionConfig[] {
  const hasKey = (env.TAU_SECRET_OPENAI_API_KEY ?? "") !== "";
  const baseUrl = env.OPENAI_BASE_URL || (hasKey ? OPENAI_OWN_BASE_URL : undefined);
  // Without OPENAI_MODEL another server's first listed model is the default, else the provider's fallback.
  const model = env.OPENAI_MODEL || (env.OPENAI_BASE_URL ? undefined : OPENAI_OWN_DEFAULT_MODEL);
  const provider: ExtensionConfig = {
    name: "provider",
    kind: "provider",
    require: true,
    command: ["tau", "ext", "provider"],
    startup_timeout_seconds: 30,
    config: baseUrl
      ? { profile: "chat_completions", base_url: baseUrl, models: model ? [{ id: model }] : [], ...(hasKey ? { api_key_secret: OPENAI_KEY_SECRET } : {}) }
      : { profile: "scripted" },
    ...(baseUrl && hasKey ? { secrets: [OPENAI_KEY_SECRET] } : {}),
  };
  const shell: ExtensionConfig = { name: "shell", kind: "tool", require: true, command: ["tau", "ext", "shell"], startup_timeout_seconds: 30 };
  return [provider, shell];
}

/**
 * The extensions a session runs: the configured list (or the defaults), plus one provider instance
 * per named profile and one `tau ext mcp` instance per MCP server (SPEC-mcp). With profiles and no
 * OPENAI_BASE_URL, the default provider (the offline demo) is left out, so a demo model is never
 * chosen over a configured endpoint (SPEC-configuration).
 */
export function sessionExtensions(config: HarnessConfig, env: NodeJS.ProcessEnv, mcp: McpServers = { servers: [], warnings: [] }): ExtensionConfig[] {
  const profiles = profilesOf(config);
  let base = config.extensions ?? defaultExtensions(env);
  if (config.extensions === undefined && profiles.length > 0 && !env.OPENAI_BASE_URL) base = base.filter((e) => e.name !== "provider");
  const names = new Set(base.map((e) => e.name));
  for (const [name] of profiles) {
    if (names.has(name)) throw new ConfigError(`providers.${name}: an extension of the same name is already configured`);
    names.add(name);
  }
  const servers = mcp.servers.map(([name, def]) => mcpExtension(name, def, config.sandbox));
  for (const e of servers) {
    if (names.has(e.name)) throw new ConfigError(`mcp_servers: server ${e.name.slice(4)} runs as extension ${e.name}, a name already configured`);
  }
  const web = config.web !== undefined ? [webExtension(config.web, config.sandbox)] : [];
  const gmail = config.gmail !== undefined ? [gmailExtension(config.gmail, config.sandbox)] : [];
  for (const e of [...web, ...gmail]) if (names.has(e.name)) throw new ConfigError(`${e.name}: the ${e.name} extension runs as extension ${e.name}, a name already configured`);
  return [...base.map((e) => withSandboxLaunch(e, config)), ...profiles.map(([name, p]) => profileExtension(name, p)), ...servers, ...web, ...gmail];
}

/**
 * The first-party Gmail extension (SPEC-gmail) for harness.yaml's `gmail`: instance `gmail`, not
 * required, no `configure` secrets (it reads and writes its own `gmail-token` under the config
 * root's secrets: a session starts before the first sign-in), and the run's sandbox set-up.
 */
export function gmailExtension(gmail: GmailConfig, sandbox?: SandboxLaunch): ExtensionConfig {
  return { name: "gmail", kind: "tool", require: false, command: ["tau", "ext", "gmail"], startup_timeout_seconds: 30, config: { gmail, ...(sandbox !== undefined ? { sandbox } : {}) } };
}

/**
 * The first-party web extension (SPEC-web) for harness.yaml's `web`: instance `web`, not required,
 * the keys of the adapters it uses as its secrets (`web-exa`, `web-parallel`), and the run's
 * sandbox set-up, whose network policy a fetched host follows.
 */
export function webExtension(web: WebConfig, sandbox?: SandboxLaunch): ExtensionConfig {
  const used = new Set([web.search, web.fetch].filter((a): a is "exa" | "parallel" => a === "exa" || a === "parallel"));
  return {
    name: "web",
    kind: "tool",
    require: false,
    command: ["tau", "ext", "web"],
    startup_timeout_seconds: 30,
    config: { web, ...(sandbox !== undefined ? { sandbox } : {}) },
    ...(used.size > 0 ? { secrets: [...used].sort().map((a) => `web-${a}`) } : {}),
  };
}

/**
 * The first-party shell extension gets the run's sandbox set-up (`--no-sandbox`, `--sandbox-config`,
 * `--approval`: the harness configuration's `sandbox`) in its configuration, as `sandbox`.
 */
function withSandboxLaunch(e: ExtensionConfig, config: HarnessConfig): ExtensionConfig {
  if (config.sandbox === undefined || e.command.join(" ") !== "tau ext shell") return e;
  return { ...e, config: { ...(e.config ?? {}), sandbox: config.sandbox } };
}

/**
 * Moves OPENAI_API_KEY out of the daemon's environment into its secret form, so it reaches only
 * the provider's `configure` and never another child's environment.
 */
export function captureProviderKey(env: NodeJS.ProcessEnv): void {
  if (env.OPENAI_API_KEY !== undefined) {
    env.TAU_SECRET_OPENAI_API_KEY ??= env.OPENAI_API_KEY;
    delete env.OPENAI_API_KEY;
  }
}
