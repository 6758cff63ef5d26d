// `tau provider add | list | remove`: named OpenAI-compatible profiles (SPEC-configuration). The key
// is never a command-line argument (it would land in shell history and `ps`): it comes from
// standard input (`--api-key-stdin`) or, on a terminal, from a prompt that does not echo.
import { existsSync } from "node:fs";
import {
  ConfigError,
  SecretError,
  loadHarnessConfig,
  profileDropInPath,
  profileNameProblem,
  profileSecretName,
  profilesOf,
  readSecret,
  removeProfileDropIn,
  removeSecret,
  secretValueProblem,
  writeProfileDropIn,
  writeSecret,
  MAX_SECRET_BYTES,
} from "../config/index.js";
import type { ProviderProfile } from "../../generated/index.js";

export interface AddProfileInput {
  readonly name: string;
  readonly baseUrl: string;
  readonly models: readonly string[];
  /** The key, or undefined for a server that needs none. */
  readonly apiKey: string | undefined;
  readonly force: boolean;
}

/** Splits repeated and comma-separated `--model` values; trims, drops empties, keeps first occurrences. */
export function modelList(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const v of values) for (const m of v.split(",")) if (m.trim() !== "" && !out.includes(m.trim())) out.push(m.trim());
  return out;
}

/** Writes the key (0600) first, then the drop-in that names it: a profile never points at a missing key. */
export async function addProfile(configRoot: string, input: AddProfileInput): Promise<{ dropIn: string; secret?: string }> {
  const problem = profileNameProblem(input.name);
  if (problem) throw new ConfigError(problem);
  if (input.models.length === 0) throw new ConfigError("give at least one --model");
  if (!input.force) {
    const current = await loadHarnessConfig(configRoot);
    if (profilesOf(current).some(([n]) => n === input.name) || existsSync(profileDropInPath(configRoot, input.name))) {
      throw new ConfigError(`a provider profile named ${input.name} already exists; use --force to replace it`);
    }
  }
  if (input.apiKey !== undefined) {
    const bad = secretValueProblem(input.apiKey);
    if (bad) throw new SecretError(bad);
  }
  const secretName = profileSecretName(input.name);
  const profile: ProviderProfile = { base_url: input.baseUrl, models: [...input.models], ...(input.apiKey !== undefined ? { api_key_secret: secretName } : {}) };
  const secret = input.apiKey !== undefined ? writeSecret(configRoot, secretName, input.apiKey) : undefined;
  if (input.apiKey === undefined) removeSecret(configRoot, secretName);
  const dropIn = await writeProfileDropIn(configRoot, input.name, profile);
  // The merged configuration must still load; otherwise undo this profile and say why.
  try {
    await loadHarnessConfig(configRoot);
  } catch (err) {
    removeProfileDropIn(configRoot, input.name);
    if (secret) removeSecret(configRoot, secretName);
    throw err;
  }
  return { dropIn, ...(secret ? { secret } : {}) };
}

export async function listProfiles(configRoot: string): Promise<Array<{ name: string; base_url: string; models: string[]; key: string }>> {
  const config = await loadHarnessConfig(configRoot);
  return profilesOf(config).map(([name, p]) => {
    let key = "none";
    if (p.api_key_secret) {
      try {
        key = readSecret(configRoot, p.api_key_secret) === undefined ? `missing (secrets/${p.api_key_secret})` : `secrets/${p.api_key_secret}`;
      } catch (err) {
        key = `unreadable: ${(err as Error).message}`;
      }
    }
    return { name, base_url: p.base_url, models: p.models, key };
  });
}

export function removeProfile(configRoot: string, name: string): { dropIn: boolean; secret: boolean } {
  const problem = profileNameProblem(name);
  if (problem) throw new ConfigError(problem);
  return { dropIn: removeProfileDropIn(configRoot, name), secret: removeSecret(configRoot, profileSecretName(name)) };
}

/** Reads all of standard input (bounded); the trailing newline is dropped. */
export async function readKeyFromStdin(stdin: NodeJS.ReadStream = process.stdin): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const b = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > MAX_SECRET_BYTES + 2) throw new SecretError(`the key is larger than ${MAX_SECRET_BYTES} bytes`);
    parts.push(b);
  }
  return Buffer.concat(parts).toString("utf8").replace(/\r?\n$/, "");
}

/** Prompts on the terminal without echo; Ctrl-C or Ctrl-D on an empty line cancels. */
export function readHiddenLine(prompt: string, stdin: NodeJS.ReadStream = process.stdin, out: NodeJS.WriteStream = process.stderr): Promise<string> {
  return new Promise((resolve, reject) => {
    out.write(prompt);
    let value = "";
    const wasRaw = stdin.isRaw;
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding("utf8");
    const done = (err?: Error) => {
      stdin.off("data", onData);
      stdin.setRawMode(wasRaw);
      stdin.pause();
      out.write("\n");
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (s: string) => {
      for (const ch of s) {
        if (ch === "\r" || ch === "\n") return done();
        if (ch === "\u0003" || (ch === "\u0004" && value === "")) return done(new SecretError("cancelled"));
        if (ch === "\u007f" || ch === "\b") value = [...value].slice(0, -1).join("");
        else if (ch >= " ") value += ch;
        if (value.length > MAX_SECRET_BYTES) return done(new SecretError(`the key is larger than ${MAX_SECRET_BYTES} bytes`));
      }
    };
    stdin.on("data", onData);
  });
}
