// MCP servers (SPEC-mcp, "Configuration"): `mcp_servers` of harness.yaml (with its drop-ins and
// overrides), then `.tau/mcp.yaml` of the project when the project is trusted — an untrusted
// project's file is skipped with a warning, since it would run commands under the user's authority.
// A server's name becomes part of tool names, tags and an instance name, so it is checked here.
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { validateMcpProjectConfig, validateMcpSettings, type SandboxLaunch, type ExtensionConfig, type HarnessConfig, type McpProjectConfig, type McpSamplingConfig, type McpServerConfig, type McpSettings } from "../../generated/index.js";
import { dropInPath, removeDropIn, writeDropIn } from "./drop-ins.js";
import { hostEntryProblem } from "./hosts.js";
import { ConfigError, loadConfigFile, loadHarnessConfig } from "./load.js";
import { TRUSTED_PROJECTS_FILE, projectTrusted } from "./sandbox.js";
import { removeSecret } from "./secrets.js";

/** A server name: lowercase words of letters and digits joined by single `_`, at most 32 characters. */
export const MCP_SERVER_NAME = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
export const MCP_MAX_SERVER_NAME_CHARS = 32;
/** Most MCP servers one session runs. */
export const MCP_MAX_SERVERS = 64;
/** The project's MCP file, below the project root. */
export const MCP_PROJECT_FILE = join(".tau", "mcp.yaml");

export interface McpServers {
  readonly servers: ReadonlyArray<readonly [string, McpServerConfig]>;
  readonly warnings: readonly string[];
}

/** Why `name` cannot name an MCP server, or undefined. */
export function mcpServerNameProblem(name: string): string | undefined {
  if (name.length <= MCP_MAX_SERVER_NAME_CHARS && MCP_SERVER_NAME.test(name)) return undefined;
  const hint = /^[A-Za-z0-9_-]+$/.test(name) ? ` (try ${JSON.stringify(name.toLowerCase().replace(/-+/g, "_").replace(/_+/g, "_").replace(/^_|_$/g, ""))})` : "";
  return `${JSON.stringify(name)} is not a server name: use lowercase letters, digits and single underscores, starting with a letter, at most ${MCP_MAX_SERVER_NAME_CHARS} characters${hint}`;
}

function entryProblem(where: string, name: string, def: McpServerConfig): string | undefined {
  const bad = mcpServerNameProblem(name);
  if (bad !== undefined) return `${where}.${name}: ${bad}`;
  const stdio = def.command !== undefined;
  const http = def.url !== undefined;
  if (stdio === http) return `${where}.${name}: give either command (a local server on stdio) or url (a Streamable HTTP server), not ${stdio ? "both" : "neither"}`;
  if (http && (def.args !== undefined || def.env !== undefined || def.cwd !== undefined)) return `${where}.${name}: args, env and cwd are for a server started with command`;
  if (stdio && def.headers !== undefined) return `${where}.${name}: headers are for a server reached by url`;
  if (http && (def.sandbox !== undefined || def.allowed_hosts !== undefined)) return `${where}.${name}: sandbox and allowed_hosts are for a server started with command`;
  for (const host of def.allowed_hosts ?? []) {
    const problem = hostEntryProblem(host);
    if (problem !== undefined) return `${where}.${name}.allowed_hosts: ${problem}`;
  }
  const model = def.sampling?.model;
  if (model !== undefined && !/^[^/\s]+\/\S+$/.test(model)) return `${where}.${name}: sampling.model must name its provider, PROVIDER/MODEL (got ${JSON.stringify(model)})`;
  return undefined;
}

/** Largest file of a client's MCP servers (`tau daemon --mcp-servers-file`). */
const MCP_CLIENT_FILE_MAX_BYTES = 1024 * 1024;

/**
 * The MCP servers a client brought for one session (`tau acp`'s editor, SPEC-acp "MCP servers"): a
 * JSON object `{mcp_servers: {...}}` in a file only the user may read, read once and removed.
 * Refused whole, naming the problem, when it is not the user's alone or not a valid entry.
 */
export function readClientMcpServers(file: string): Record<string, McpServerConfig> {
  let text: string;
  try {
    const st = lstatSync(file);
    if (!st.isFile() || (st.mode & 0o077) !== 0 || (typeof process.getuid === "function" && st.uid !== process.getuid())) throw new ConfigError(`${file}: the client's MCP servers must be a file of yours alone (0600)`);
    if (st.size > MCP_CLIENT_FILE_MAX_BYTES) throw new ConfigError(`${file}: the client's MCP servers are over ${MCP_CLIENT_FILE_MAX_BYTES} bytes`);
    text = readFileSync(file, "utf8");
  } finally {
    rmSync(file, { force: true });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ConfigError(`${file}: the client's MCP servers are not JSON`);
  }
  if (!validateMcpProjectConfig(value)) throw new ConfigError(`${file}: the client's MCP servers are not valid entries`);
  const servers = (value as McpProjectConfig).mcp_servers ?? {};
  for (const [name, def] of Object.entries(servers)) {
    const problem = entryProblem("the client's mcp_servers", name, def);
    if (problem !== undefined) throw new ConfigError(problem);
  }
  return servers;
}

/**
 * The session's MCP servers, by name (the project's entry replacing the user's of the same name); a
 * client's (`client`) join them, except where a configured server has the name (said in a warning).
 */
export async function loadMcpServers(config: HarnessConfig, configRoot: string, projectRoot: string, client: Readonly<Record<string, McpServerConfig>> = {}): Promise<McpServers> {
  const warnings: string[] = [];
  const byName = new Map<string, McpServerConfig>();
  for (const [name, def] of Object.entries(config.mcp_servers ?? {})) {
    const problem = entryProblem("harness.yaml: mcp_servers", name, def);
    if (problem !== undefined) throw new ConfigError(problem);
    byName.set(name, def);
  }
  const file = join(projectRoot, MCP_PROJECT_FILE);
  if (projectTrusted(configRoot, projectRoot)) {
    const project = await loadConfigFile<McpProjectConfig>(file, validateMcpProjectConfig);
    for (const [name, def] of Object.entries(project?.mcp_servers ?? {})) {
      const problem = entryProblem(`${file}: mcp_servers`, name, def);
      if (problem !== undefined) throw new ConfigError(problem);
      byName.set(name, def);
    }
  } else if (existsSync(file)) {
    warnings.push(`${file} ignored: this project is not trusted (:sandbox trust records it in ${join(configRoot, TRUSTED_PROJECTS_FILE)})`);
  }
  for (const [name, def] of Object.entries(client)) {
    if (byName.has(name)) warnings.push(`the editor's MCP server ${name} is not started: a server of that name is configured (harness.yaml or ${MCP_PROJECT_FILE})`);
    else byName.set(name, def);
  }
  const servers = [...byName].filter(([, def]) => def.enable !== false).sort(([a], [b]) => a.localeCompare(b));
  if (servers.length > MCP_MAX_SERVERS) throw new ConfigError(`mcp_servers: more than ${MCP_MAX_SERVERS} servers`);
  return { servers, warnings };
}

/** The instance name of server `name`'s extension. */
export function mcpInstanceName(name: string): string {
  return `mcp-${name}`;
}

/**
 * The extension instance of one server: `tau ext mcp`, not required (a server that fails never
 * fails the session), its start-up allowance covering the server's own when it holds the first prompt.
 */
export function mcpExtension(name: string, def: McpServerConfig, sandbox?: SandboxLaunch): ExtensionConfig {
  const hold = def.wait_at_start === true ? Math.ceil((def.startup_timeout_ms ?? 30_000) / 1000) + 10 : 30;
  return {
    name: mcpInstanceName(name),
    kind: "tool",
    require: false,
    command: ["tau", "ext", "mcp"],
    tool_prefix: `mcp__${name}__`,
    startup_timeout_seconds: Math.min(3600, hold),
    config: { server: name, definition: def, ...(sandbox !== undefined ? { sandbox } : {}) },
  };
}

/** The `sampling` of the MCP server an extension instance runs (`tau ext mcp` with its settings), if it has one. */
export function mcpSamplingOf(config: ExtensionConfig | undefined): McpSamplingConfig | undefined {
  const settings = config?.config;
  if (config?.command.join(" ") !== "tau ext mcp" || !validateMcpSettings(settings)) return undefined;
  return (settings as McpSettings).definition.sampling;
}

/** The drop-in `tau mcp add NAME` writes: `<config>/harness.d/mcp-NAME.yaml`. */
export function mcpDropInFile(name: string): string {
  return `mcp-${name}.yaml`;
}

/**
 * Adds server `name` as its own drop-in (SPEC-mcp, "Configuration"): refused when the name is taken
 * (in harness.yaml, a drop-in, or the trusted project's file) unless `force` replaces a drop-in
 * `tau mcp add` wrote; the configuration must still load with it, or the drop-in is taken back.
 */
export async function addMcpServer(configRoot: string, projectRoot: string, name: string, def: McpServerConfig, force: boolean): Promise<string> {
  const problem = entryProblem("mcp_servers", name, def);
  if (problem !== undefined) throw new ConfigError(problem);
  const file = mcpDropInFile(name);
  const ours = existsSync(dropInPath(configRoot, file));
  if (!(force && ours)) {
    const config = await loadHarnessConfig(configRoot);
    const { servers } = await loadMcpServers(config, configRoot, projectRoot);
    const taken = ours || servers.some(([n]) => n === name) || Object.hasOwn(config.mcp_servers ?? {}, name);
    if (taken) throw new ConfigError(ours ? `an MCP server named ${name} was added already; use --force to replace it` : `an MCP server named ${name} is configured already (harness.yaml or ${MCP_PROJECT_FILE}); edit it there, or choose another name`);
  }
  const header = `# Written by \`tau mcp add ${name}\`; remove with \`tau mcp remove ${name}\`.\n# Values of env and headers are secrets to tau: never logged.\n`;
  const path = await writeDropIn(configRoot, file, { mcp_servers: { [name]: def } }, header);
  try {
    await loadMcpServers(await loadHarnessConfig(configRoot), configRoot, projectRoot);
  } catch (err) {
    removeDropIn(configRoot, file);
    throw err;
  }
  return path;
}

/** The entry of Streamable HTTP server `name` a session here would start (what `tau mcp login` signs in to). */
export async function remoteMcpServer(configRoot: string, projectRoot: string, name: string): Promise<McpServerConfig & { url: string }> {
  const bad = mcpServerNameProblem(name);
  if (bad !== undefined) throw new ConfigError(bad);
  const { servers } = await loadMcpServers(await loadHarnessConfig(configRoot), configRoot, projectRoot);
  const def = servers.find(([n]) => n === name)?.[1];
  if (def === undefined) throw new ConfigError(`no MCP server named ${name} is configured (and enabled) here; tau mcp list shows them`);
  if (def.url === undefined) throw new ConfigError(`MCP server ${name} is a local server (stdio): it has no sign-in; give it what it needs with its env`);
  return { ...def, url: def.url };
}

/** A server URL as its sign-in is keyed: parsed and serialized (case of scheme and host, default port). */
export function normalizedMcpUrl(url: string): string {
  return new URL(url).href;
}

/** The secret holding the sign-in `tau mcp login` stored for the server at `url` (SPEC-mcp, "Sign-in"). */
export function mcpSignInSecret(url: string): string {
  return `mcp-oauth-${createHash("sha256").update(normalizedMcpUrl(url)).digest("hex").slice(0, 40)}`;
}

/** Removes the sign-in of the server at `url`; false when there was none. */
export function removeMcpSignIn(configRoot: string, url: string): boolean {
  return removeSecret(configRoot, mcpSignInSecret(url));
}

/** Removes the drop-in `tau mcp add NAME` wrote; false when there is none. */
export function removeMcpServer(configRoot: string, name: string): boolean {
  const bad = mcpServerNameProblem(name);
  if (bad !== undefined) throw new ConfigError(bad);
  return removeDropIn(configRoot, mcpDropInFile(name));
}
