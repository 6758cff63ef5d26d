// `tau provider add | list | remove`: named OpenAI-compatible profiles (SPEC-configuration). The key
// is never a command-line argument (it would land in shell history and `ps`): it comes from
// standard input (`--api-key-stdin`) or, on a terminal, from a prompt that does not echo.
import { spawn } from "node:child_process";
import { closeSync, constants, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { randomHex } from "../startup/random.js";
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
  secretPath,
  secretValueProblem,
  writeProfileDropIn,
  writeSecret,
  MAX_SECRET_BYTES,
} from "../config/index.js";
import type { ProviderProfile } from "../../generated/index.js";
import { isSecretVariable } from "../protocol/index.js";
import { selfCommand } from "../transport/index.js";
import { extensionLogin } from "./extension-login.js";

export interface AddProfileInput {
  readonly name: string;
  readonly baseUrl: string;
  readonly models: readonly string[];
  /** The wire API; chat completions when absent. */
  readonly api?: "chat_completions" | "responses" | "chatgpt_ws";
  /** chatgpt_ws: the sign-in issuer, when not the default. */
  readonly authUrl?: string;
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

/**
 * What is wrong with a base URL before anything is asked of it: only http and https, no user or
 * password in it (a key goes in the key file), no fragment; undefined when it is usable.
 */
export function baseUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `--base-url ${JSON.stringify(text.slice(0, 200))} is not a URL (expected e.g. https://api.example.com/v1)`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `--base-url must start with http:// or https://, not ${url.protocol}`;
  if (url.username !== "" || url.password !== "") return "--base-url must not carry a user or password; the key is read with --api-key-stdin or at the prompt";
  if (url.hash !== "") return "--base-url must not have a #fragment";
  return undefined;
}

/** The answer of an endpoint asked for its models. */
export type EndpointCheck = { readonly ok: true; readonly models: readonly string[] } | { readonly ok: false; readonly reason: string };

/** How long the check may take in all (the listing itself gives up sooner). */
export const ENDPOINT_CHECK_TIMEOUT_MS = 30_000;
/** Largest answer read from the check. */
const ENDPOINT_CHECK_MAX_BYTES = 1024 * 1024;

/**
 * Asks the endpoint for its models (`GET BASE/models` with the key) through the provider
 * extension's `--list-models` mode, so the check goes out under the same egress policy (proxy,
 * TLS, no redirects, bounds) as every provider call. The key travels on the child's standard
 * input; its environment carries no secret.
 */
export function checkEndpoint(baseUrl: string, apiKey: string | undefined): Promise<EndpointCheck> {
  const [command, ...args] = selfCommand() as [string, ...string[]];
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!isSecretVariable(name)) env[name] = value;
  return new Promise((resolve) => {
    const child = spawn(command, [...args, "ext", "provider", "--list-models"], { env, stdio: ["pipe", "pipe", "ignore"] });
    let out = "";
    let settled = false;
    const finish = (r: EndpointCheck) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child.exitCode === null) child.kill("SIGKILL");
      resolve(r);
    };
    const timer = setTimeout(() => finish({ ok: false, reason: `no answer within ${ENDPOINT_CHECK_TIMEOUT_MS / 1000} s` }), ENDPOINT_CHECK_TIMEOUT_MS);
    child.on("error", (err) => finish({ ok: false, reason: `the check could not start: ${err.message}` }));
    child.stdin.on("error", () => {});
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      if (out.length > ENDPOINT_CHECK_MAX_BYTES) finish({ ok: false, reason: "the check's answer is too large" });
    });
    child.on("close", () => {
      try {
        const v = JSON.parse(out.trim().split("\n").pop() ?? "") as { ok?: unknown; models?: unknown; reason?: unknown };
        if (v.ok === true && Array.isArray(v.models) && v.models.every((m) => typeof m === "string")) finish({ ok: true, models: v.models as string[] });
        else finish({ ok: false, reason: typeof v.reason === "string" ? v.reason : "the check gave no answer" });
      } catch {
        finish({ ok: false, reason: "the check gave no answer" });
      }
    });
    child.stdin.end(`${JSON.stringify({ base_url: baseUrl, ...(apiKey !== undefined ? { api_key: apiKey } : {}) })}\n`);
  });
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
  const profile: ProviderProfile = {
    ...(input.api !== undefined && input.api !== "chat_completions" ? { api: input.api } : {}),
    base_url: input.baseUrl,
    models: [...input.models],
    ...(input.apiKey !== undefined ? { api_key_secret: secretName } : {}),
    ...(input.authUrl !== undefined ? { auth_url: input.authUrl } : {}),
  };
  // What a --force replaces is kept, byte for byte, until the new profile loads: a failure puts it back.
  const dropInPath = profileDropInPath(configRoot, input.name);
  const keyPath = secretPath(configRoot, secretName);
  const before = { dropIn: readPrevious(dropInPath), key: readPrevious(keyPath) };
  let secret: string | undefined;
  // The drop-in must be written and the merged configuration must still load; otherwise undo this
  // profile (its key file included), restore what it replaced, and say why.
  try {
    secret = input.apiKey !== undefined ? writeSecret(configRoot, secretName, input.apiKey) : undefined;
    const dropIn = await writeProfileDropIn(configRoot, input.name, profile);
    await loadHarnessConfig(configRoot);
    if (input.apiKey === undefined) removeSecret(configRoot, secretName); // the replaced profile's key
    return { dropIn, ...(secret ? { secret } : {}) };
  } catch (err) {
    restore(dropInPath, before.dropIn, () => removeProfileDropIn(configRoot, input.name));
    restore(keyPath, before.key, () => removeSecret(configRoot, secretName));
    throw err;
  }
}

/** A file's bytes before a change (undefined when there is none), bounded like any key or drop-in. */
function readPrevious(path: string): Buffer | undefined {
  try {
    if (statSync(path).size > 1024 * 1024) throw new ConfigError(`${path} is larger than 1 MiB; move it away first`);
    return readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** Puts a file back as it was (0600, through a temporary file and a rename), or removes it when there was none. */
function restore(path: string, bytes: Buffer | undefined, remove: () => void): void {
  if (bytes === undefined) return void remove();
  const tmp = join(dirname(path), `.restore.${process.pid}.${randomHex(6)}.tmp`);
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

export async function listProfiles(configRoot: string): Promise<Array<{ name: string; base_url: string; models: string[]; key: string }>> {
  const config = await loadHarnessConfig(configRoot);
  return profilesOf(config).map(([name, p]) => {
    let key = "none";
    if (p.api === "chatgpt_ws") {
      const oauth = `${profileSecretName(name)}-oauth`;
      try {
        key = readSecret(configRoot, oauth) === undefined ? `not signed in (tau provider login ${name})` : `secrets/${oauth}`;
      } catch (err) {
        key = `unreadable: ${(err as Error).message}`;
      }
    } else if (p.api_key_secret) {
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
  const oauth = removeSecret(configRoot, `${profileSecretName(name)}-oauth`); // a chatgpt_ws profile's sign-in
  return { dropIn: removeProfileDropIn(configRoot, name), secret: removeSecret(configRoot, profileSecretName(name)) || oauth };
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
    let value = "";
    const wasRaw = stdin.isRaw;
    // Echo goes off before the prompt shows: a key typed or pasted the moment it appears is never echoed.
    stdin.setRawMode(true);
    out.write(prompt);
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

/** The answer of a sign-in. */
export type LoginResult = { readonly ok: true; readonly file: string } | { readonly ok: false; readonly reason: string };

/**
 * Signs a chatgpt_ws profile in (SPEC-provider-websocket, "Sign-in"): runs the device code flow (or,
 * `browser`, the redirect flow on this machine's loopback) in the provider extension's `--login`
 * mode, so it goes out under the provider egress policy. What the user must do reaches the terminal
 * on standard error; the tokens go to the 0600 sign-in file only.
 */
export async function loginProfile(configRoot: string, name: string, how: { browser?: boolean; port?: number; open?: boolean } = {}): Promise<LoginResult> {
  const problem = profileNameProblem(name);
  if (problem) throw new ConfigError(problem);
  const profile = profilesOf(await loadHarnessConfig(configRoot)).find(([n]) => n === name)?.[1];
  if (profile === undefined) throw new ConfigError(`no provider profile named ${name}; add one with \`tau provider add ${name} --api chatgpt_ws …\``);
  if (profile.api !== "chatgpt_ws") throw new ConfigError(`provider profile ${name} is not a chatgpt_ws profile; only those sign in`);
  const v = await extensionLogin("provider", {
    config_root: configRoot,
    secret: `${profileSecretName(name)}-oauth`,
    auth_url: profile.auth_url ?? "https://auth.openai.com",
    method: how.browser === true ? "browser" : "device",
    ...(how.port !== undefined ? { port: how.port } : {}),
    ...(how.open !== undefined ? { open: how.open } : {}),
  });
  if (v.ok === true && typeof v.file === "string") return { ok: true, file: v.file };
  return { ok: false, reason: typeof v.reason === "string" ? v.reason : "the sign-in gave no answer" };
}
