// Recorded provider streams ("cassettes") for tests (SPEC-provider-chat-completions).
//
// A cassette is a JSON file holding a content-free summary of the request and the exact response:
// status, headers and the body as the chunks it arrived in, each with a timing hint. Replaying it
// from a loopback server reproduces the byte-level framing (events split across chunks, CRLF,
// comments) of real provider traffic. Credentials are never part of a cassette: sensitive headers
// are dropped when recording and refused when loading.
import { readFileSync } from "node:fs";
import type { ProviderCall } from "../../protocol/provider-request.js";
import { buildChatCompletionBody } from "./chat-completions.js";

export const CASSETTE_FORMAT = "tau.cassette/1";

/** Headers that may carry credentials or session state; never stored in a cassette. */
export const SENSITIVE_HEADERS: ReadonlySet<string> = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "api-key",
  "x-api-key",
  "openai-organization",
  "openai-project",
]);

export interface CassetteRequestSummary {
  method: "POST";
  /** Request path, e.g. `/v1/chat/completions`. */
  path: string;
  model: string;
  /** Roles of the messages sent, in order (content is not recorded). */
  message_roles: string[];
  /** Names of the function tools offered. */
  tools: string[];
}

export interface CassetteChunk {
  /** Milliseconds to wait before sending this chunk (a hint; replay may scale it). */
  after_ms: number;
  /** The chunk as UTF-8 text… */
  text?: string;
  /** …or, for a chunk that splits a multi-byte character, as base64 bytes. */
  base64?: string;
}

export interface Cassette {
  format: typeof CASSETTE_FORMAT;
  name: string;
  description?: string;
  request: CassetteRequestSummary;
  response: {
    status: number;
    headers: Record<string, string>;
    chunks: CassetteChunk[];
  };
}

/** A response ready to be served by a loopback server (see test/support/fake-openai.ts). */
export interface ReplayResponse {
  status: number;
  headers: Record<string, string>;
  chunks: { data: Uint8Array; delayMs: number }[];
}

export class CassetteError extends Error {
  override readonly name = "CassetteError";
}

function fail(where: string, what: string): never {
  throw new CassetteError(`cassette ${where}: ${what}`);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function stringArray(v: unknown, where: string): string[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) fail(where, "must be an array of strings");
  return v as string[];
}

/** Validates a parsed cassette. Throws CassetteError naming the first problem. */
export function parseCassette(json: unknown, where = "<memory>"): Cassette {
  if (!isRecord(json)) fail(where, "is not a JSON object");
  if (json.format !== CASSETTE_FORMAT) fail(where, `format must be "${CASSETTE_FORMAT}"`);
  if (typeof json.name !== "string" || json.name === "") fail(where, "name must be a non-empty string");
  if (json.description !== undefined && typeof json.description !== "string") fail(where, "description must be a string");
  const req = json.request;
  if (!isRecord(req)) fail(where, "request must be an object");
  if (req.method !== "POST") fail(where, "request.method must be POST");
  if (typeof req.path !== "string" || !req.path.startsWith("/")) fail(where, "request.path must start with /");
  if (typeof req.model !== "string") fail(where, "request.model must be a string");
  const roles = stringArray(req.message_roles, `${where} request.message_roles`);
  const tools = stringArray(req.tools, `${where} request.tools`);
  const res = json.response;
  if (!isRecord(res)) fail(where, "response must be an object");
  if (typeof res.status !== "number" || !Number.isInteger(res.status) || res.status < 100 || res.status > 599) {
    fail(where, "response.status must be an HTTP status");
  }
  if (!isRecord(res.headers)) fail(where, "response.headers must be an object");
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) {
    if (typeof v !== "string") fail(where, `response header ${k} must be a string`);
    if (SENSITIVE_HEADERS.has(k.toLowerCase())) fail(where, `response header ${k} is sensitive and must not be recorded`);
    headers[k.toLowerCase()] = v;
  }
  if (!Array.isArray(res.chunks)) fail(where, "response.chunks must be an array");
  const chunks: CassetteChunk[] = res.chunks.map((c: unknown, i: number) => {
    if (!isRecord(c)) fail(where, `chunk ${i} is not an object`);
    if (typeof c.after_ms !== "number" || !(c.after_ms >= 0)) fail(where, `chunk ${i}: after_ms must be a number ≥ 0`);
    const hasText = typeof c.text === "string";
    const hasB64 = typeof c.base64 === "string";
    if (hasText === hasB64) fail(where, `chunk ${i}: exactly one of text or base64`);
    const chunk: CassetteChunk = { after_ms: c.after_ms };
    if (hasText) chunk.text = c.text as string;
    else chunk.base64 = c.base64 as string;
    return chunk;
  });
  const cassette: Cassette = {
    format: CASSETTE_FORMAT,
    name: json.name,
    request: { method: "POST", path: req.path, model: req.model, message_roles: roles, tools },
    response: { status: res.status, headers, chunks },
  };
  if (typeof json.description === "string") cassette.description = json.description;
  return cassette;
}

export function loadCassette(path: string): Cassette {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new CassetteError(`cassette ${path}: ${err instanceof SyntaxError ? "is not valid JSON" : "cannot be read"}`);
  }
  return parseCassette(json, path);
}

/** The exact response bytes and timing of a cassette; `timeScale` multiplies the delays (0 = none). */
export function cassetteReplay(cassette: Cassette, options: { timeScale?: number } = {}): ReplayResponse {
  const scale = options.timeScale ?? 1;
  return {
    status: cassette.response.status,
    headers: { ...cassette.response.headers },
    chunks: cassette.response.chunks.map((c) => ({
      data: c.text !== undefined ? new TextEncoder().encode(c.text) : new Uint8Array(Buffer.from(c.base64 ?? "", "base64")),
      delayMs: Math.round(c.after_ms * scale),
    })),
  };
}

/** The content-free request summary for a provider round, as a cassette stores it. */
export function summarizeRequest(request: ProviderCall, path = "/v1/chat/completions"): CassetteRequestSummary {
  const body = buildChatCompletionBody(request);
  return {
    method: "POST",
    path,
    model: body.model,
    message_roles: body.messages.map((m) => m.role),
    tools: (body.tools ?? []).map((t) => t.function.name),
  };
}

/**
 * Builds a cassette from captured traffic. Sensitive headers are dropped; chunks keep their exact
 * bytes (text when they are valid UTF-8 on their own, base64 otherwise).
 */
export function recordCassette(input: {
  name: string;
  description?: string;
  request: CassetteRequestSummary;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  chunks: { data: Uint8Array; afterMs: number }[];
}): Cassette {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.headers)) {
    const key = k.toLowerCase();
    if (v === undefined || SENSITIVE_HEADERS.has(key)) continue;
    headers[key] = Array.isArray(v) ? v.join(", ") : v;
  }
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const cassette: Cassette = {
    format: CASSETTE_FORMAT,
    name: input.name,
    request: input.request,
    response: {
      status: input.status,
      headers,
      chunks: input.chunks.map((c) => {
        try {
          return { after_ms: c.afterMs, text: decoder.decode(c.data) };
        } catch {
          return { after_ms: c.afterMs, base64: Buffer.from(c.data).toString("base64") };
        }
      }),
    },
  };
  if (input.description !== undefined) cassette.description = input.description;
  return cassette;
}
