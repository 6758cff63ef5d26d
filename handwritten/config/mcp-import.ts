// `tau mcp import` (SPEC-mcp, "Commands"): MCP servers another agent's configuration holds, as tau's
// entries. Claude Code and Cursor (`mcpServers` of `.mcp.json`, `~/.claude.json` and its projects),
// Codex (`mcp_servers` of `~/.codex/config.toml`) and opencode (`mcp` of `opencode.json`). Only what
// tau's entry can say is taken; anything else is named in a note, never silently dropped.
import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { McpServerConfig } from "../../generated/index.js";
import { ConfigError } from "./load.js";
import { MCP_MAX_SERVER_NAME_CHARS, mcpServerNameProblem } from "./mcp.js";

/** The largest file read: configurations are small, and `~/.claude.json` keeps history too. */
export const MCP_IMPORT_MAX_BYTES = 16 * 1024 * 1024;

export type McpImportSource = "claude" | "codex" | "opencode";

export interface ImportedServer {
  /** tau's name for it (the original rewritten to the name rule). */
  readonly name: string;
  readonly original: string;
  readonly def: McpServerConfig;
}

export interface McpImport {
  readonly file: string;
  readonly source: McpImportSource;
  readonly servers: ImportedServer[];
  /** What could not be taken, and why. */
  readonly notes: string[];
}

/** The files looked in when none is named, in order: the project's first, then the user's. */
export function defaultImportFiles(projectRoot: string, home = homedir()): string[] {
  return [
    join(projectRoot, ".mcp.json"),
    join(projectRoot, "opencode.json"),
    join(home, ".claude.json"),
    join(home, ".codex", "config.toml"),
    join(home, ".config", "opencode", "opencode.json"),
  ];
}

/** A server name as tau's rule wants it: lowercase, `-`, `.` and spaces as `_`, nothing else. */
export function importedName(original: string): string | undefined {
  const name = original
    .toLowerCase()
    .replace(/[-. ]+/g, "_")
    .replace(/[^a-z0-9_]/g, "")
    .replace(/_+/g, "_")
    .replace(/^[_0-9]+|_$/g, "")
    .slice(0, MCP_MAX_SERVER_NAME_CHARS)
    .replace(/_$/, "");
  return mcpServerNameProblem(name) === undefined ? name : undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] | undefined => (Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : undefined);
function stringMap(v: unknown): Record<string, string> | undefined {
  if (!isRecord(v)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === "string") out[k] = x;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Reads `file` and the servers it holds; the format is told by its name and content. */
export async function readMcpImport(file: string, projectRoot: string): Promise<McpImport> {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (err) {
    throw new ConfigError(`${file}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message}`);
  }
  if (size > MCP_IMPORT_MAX_BYTES) throw new ConfigError(`${file}: larger than ${MCP_IMPORT_MAX_BYTES} bytes`);
  const text = readFileSync(file, "utf8");
  let doc: unknown;
  try {
    doc = file.endsWith(".toml") ? (await import("smol-toml")).parse(text) : JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${file}: not ${file.endsWith(".toml") ? "TOML" : "JSON"} (${(err as Error).message.split("\n")[0]})`);
  }
  if (!isRecord(doc)) throw new ConfigError(`${file}: not an object`);
  const notes: string[] = [];
  const entries: Array<[string, ImportedServerInput]> = [];
  let source: McpImportSource;
  if (file.endsWith(".toml")) {
    source = "codex";
    for (const [n, v] of Object.entries(isRecord(doc.mcp_servers) ? doc.mcp_servers : {})) entries.push([n, fromCodex(v)]);
  } else if (isRecord(doc.mcp)) {
    source = "opencode";
    for (const [n, v] of Object.entries(doc.mcp)) entries.push([n, fromOpencode(v)]);
  } else {
    source = "claude";
    const maps = [doc.mcpServers];
    // ~/.claude.json also keeps servers per project folder: this folder's are taken too.
    if (isRecord(doc.projects) && isRecord(doc.projects[projectRoot])) maps.push(doc.projects[projectRoot].mcpServers);
    for (const m of maps) for (const [n, v] of Object.entries(isRecord(m) ? m : {})) entries.push([n, fromClaude(v)]);
  }
  const servers: ImportedServer[] = [];
  for (const [original, r] of entries) {
    const name = importedName(original);
    const where = `${JSON.stringify(original.slice(0, 80))}`;
    if (name === undefined) notes.push(`${where}: no server name can be made of it; add it by hand with tau mcp add`);
    else if ("skip" in r) notes.push(`${where}: ${r.skip}`);
    else if (servers.some((s) => s.name === name)) notes.push(`${where}: its name ${name} is taken by another server of the same file`);
    else {
      for (const n of r.notes) notes.push(`${where}: ${n}`);
      servers.push({ name, original, def: r.def });
    }
  }
  return { file, source, servers, notes };
}

type ImportedServerInput = { def: McpServerConfig; notes: string[] } | { skip: string };

/** `{command, args, env}` or `{type: "http"|"sse", url, headers}` (Claude Code, Cursor, `.mcp.json`). */
function fromClaude(v: unknown): ImportedServerInput {
  if (!isRecord(v)) return { skip: "not an object" };
  const notes: string[] = [];
  if (typeof v.url === "string") {
    if (v.type === "sse") notes.push("an SSE server: tau speaks Streamable HTTP to its url, which servers that offer both accept");
    const headers = stringMap(v.headers);
    return { def: { url: v.url, ...(headers ? { headers } : {}) }, notes };
  }
  if (typeof v.command !== "string") return { skip: "neither a command nor a url" };
  const args = strings(v.args);
  const env = stringMap(v.env);
  return { def: { command: v.command, ...(args && args.length > 0 ? { args } : {}), ...(env ? { env } : {}), ...(typeof v.cwd === "string" ? { cwd: v.cwd } : {}) }, notes };
}

/** `[mcp_servers.NAME]`: command, args, env, cwd, url, http_headers, timeouts in seconds, enabled (Codex). */
function fromCodex(v: unknown): ImportedServerInput {
  if (!isRecord(v)) return { skip: "not a table" };
  const notes: string[] = [];
  const timeouts: Partial<McpServerConfig> = {};
  const seconds = (x: unknown) => (typeof x === "number" && x > 0 && x <= 4_294_967 ? Math.round(x * 1000) : undefined);
  const startup = seconds(v.startup_timeout_sec) ?? (typeof v.startup_timeout_ms === "number" && v.startup_timeout_ms > 0 ? Math.round(v.startup_timeout_ms) : undefined);
  if (startup !== undefined) timeouts.startup_timeout_ms = startup;
  const call = seconds(v.tool_timeout_sec);
  if (call !== undefined) timeouts.call_timeout_ms = call;
  const off = v.enabled === false ? { enable: false } : {};
  if (typeof v.bearer_token_env_var === "string") notes.push(`its bearer token comes from $${v.bearer_token_env_var} in Codex; give it to tau as --header "Authorization: Bearer …"`);
  if (typeof v.url === "string") {
    const headers = stringMap(v.http_headers);
    return { def: { url: v.url, ...(headers ? { headers } : {}), ...timeouts, ...off }, notes };
  }
  if (typeof v.command !== "string") return { skip: "neither a command nor a url" };
  const args = strings(v.args);
  const env = stringMap(v.env);
  return { def: { command: v.command, ...(args && args.length > 0 ? { args } : {}), ...(env ? { env } : {}), ...(typeof v.cwd === "string" ? { cwd: v.cwd } : {}), ...timeouts, ...off }, notes };
}

/** `{type: "local", command: [cmd, …args], environment}` or `{type: "remote", url, headers}` (opencode). */
function fromOpencode(v: unknown): ImportedServerInput {
  if (!isRecord(v)) return { skip: "not an object" };
  const off = v.enabled === false ? { enable: false } : {};
  const timeout = typeof v.timeout === "number" && v.timeout > 0 ? { startup_timeout_ms: Math.round(v.timeout) } : {};
  if (v.type === "remote") {
    if (typeof v.url !== "string") return { skip: "a remote server without a url" };
    const headers = stringMap(v.headers);
    return { def: { url: v.url, ...(headers ? { headers } : {}), ...timeout, ...off }, notes: [] };
  }
  const command = strings(v.command);
  if (command === undefined || command.length === 0) return { skip: "a local server without a command" };
  const env = stringMap(v.environment);
  return { def: { command: command[0] as string, ...(command.length > 1 ? { args: command.slice(1) } : {}), ...(env ? { env } : {}), ...timeout, ...off }, notes: [] };
}
