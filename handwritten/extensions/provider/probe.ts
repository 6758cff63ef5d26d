// `tau ext provider --list-models`: asks an endpoint for its models once, under the same egress
// policy as every provider call, for `tau provider add` to check an endpoint before it writes
// anything (SPEC-configuration, "Provider profiles"). The base URL and the key come as one JSON
// line on standard input (never as arguments); the answer is one JSON line on standard output.
import { createEgressPolicy, listModels } from "./index.js";

/** Largest request line read. */
const MAX_REQUEST_BYTES = 64 * 1024;

export interface ProbeAnswer {
  readonly ok: boolean;
  readonly models?: string[];
  readonly reason?: string;
}

async function readRequest(stdin: NodeJS.ReadableStream): Promise<{ base_url: string; api_key?: string }> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const b = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > MAX_REQUEST_BYTES) throw new Error(`the request is larger than ${MAX_REQUEST_BYTES} bytes`);
    parts.push(b);
  }
  const v: unknown = JSON.parse(Buffer.concat(parts).toString("utf8"));
  if (typeof v !== "object" || v === null) throw new Error("the request is not a JSON object");
  const { base_url, api_key } = v as Record<string, unknown>;
  if (typeof base_url !== "string") throw new Error("base_url must be a string");
  if (api_key !== undefined && typeof api_key !== "string") throw new Error("api_key must be a string");
  return { base_url, ...(api_key !== undefined ? { api_key } : {}) };
}

/** Runs the probe; the process's exit status (0 with an answer, 2 for a malformed request). */
export async function probeModels(stdin: NodeJS.ReadableStream = process.stdin, stdout: NodeJS.WritableStream = process.stdout): Promise<number> {
  let request: { base_url: string; api_key?: string };
  try {
    request = await readRequest(stdin);
  } catch (err) {
    stdout.write(`${JSON.stringify({ ok: false, reason: `malformed probe request: ${(err as Error).message}` })}\n`);
    return 2;
  }
  let answer: ProbeAnswer;
  try {
    const egress = createEgressPolicy({});
    const r = await listModels({ baseUrl: request.base_url, ...(request.api_key !== undefined ? { apiKey: request.api_key } : {}) }, { egress });
    answer = r.ok ? { ok: true, models: r.models.map((m) => m.id) } : { ok: false, reason: r.reason };
  } catch (err) {
    // An unusable proxy variable or base URL: the reason never carries the key (listModels' own are sanitized).
    const key = request.api_key;
    const reason = (err as Error).message;
    answer = { ok: false, reason: key ? reason.split(key).join("[redacted]") : reason };
  }
  stdout.write(`${JSON.stringify(answer)}\n`);
  return 0;
}
