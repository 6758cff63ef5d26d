// OTLP for tests, on the official definitions: the opentelemetry-proto .proto files (committed under
// test/fixtures/otlp-proto, v1.11.0) loaded with protobufjs; a strict check that an OTLP JSON value
// names only fields those definitions have; a normal form of spans to compare encodings; and a
// loopback OTLP/HTTP receiver that decodes each request with them and answers an export response.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import protobuf from "protobufjs";
import { REPO_ROOT } from "./paths.js";

const PROTO_ROOT = join(REPO_ROOT, "test", "fixtures", "otlp-proto");

let loaded: { request: protobuf.Type; response: protobuf.Type } | undefined;

/** ExportTraceServiceRequest and ExportTraceServiceResponse from the official .proto files. */
export function otlpTypes(): { request: protobuf.Type; response: protobuf.Type } {
  if (loaded) return loaded;
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (target.startsWith("/") ? target : join(PROTO_ROOT, target));
  root.loadSync("opentelemetry/proto/collector/trace/v1/trace_service.proto", { keepCase: false });
  root.resolveAll();
  loaded = {
    request: root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest"),
    response: root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse"),
  };
  return loaded;
}

const ID_FIELDS = new Set(["traceId", "spanId", "parentSpanId"]);

/**
 * Checks that `json` (one OTLP JSON ExportTraceServiceRequest) names only fields of the official
 * message types, with values of their kinds, and returns the message it decodes to (ids, which
 * OTLP JSON writes as hex, turned into bytes).
 */
export function decodeOtlpJson(json: unknown): protobuf.Message {
  const { request } = otlpTypes();
  const walk = (type: protobuf.Type, value: unknown, where: string): unknown => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error(`${where}: expected an object for ${type.name}`);
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const field = type.fields[key];
      if (!field) throw new Error(`${where}.${key}: ${type.name} has no such field`);
      const one = (x: unknown, at: string): unknown => {
        if (ID_FIELDS.has(key)) {
          if (typeof x !== "string" || !/^[0-9a-f]*$/.test(x)) throw new Error(`${at}: ids are lowercase hex in OTLP JSON`);
          return Buffer.from(x, "hex");
        }
        return field.resolvedType instanceof protobuf.Type ? walk(field.resolvedType, x, at) : x;
      };
      if (field.repeated) {
        if (!Array.isArray(v)) throw new Error(`${where}.${key}: expected a list`);
        out[key] = v.map((x, i) => one(x, `${where}.${key}[${i}]`));
      } else out[key] = one(v, `${where}.${key}`);
    }
    return out;
  };
  const message = request.fromObject(walk(request, json, "request") as Record<string, unknown>);
  const problem = request.verify(message);
  if (problem) throw new Error(problem);
  // Through the wire format and back: what a collector would read.
  return request.decode(request.encode(message).finish());
}

export interface NormalSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  start: string;
  end: string;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; time: string; attributes: Record<string, unknown> }>;
  status: number;
  resource: Record<string, unknown>;
}

function anyValue(v: Record<string, unknown> | undefined): unknown {
  if (!v) return null;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  const arr = v.arrayValue as { values?: Array<Record<string, unknown>> } | undefined;
  if (arr) return (arr.values ?? []).map(anyValue);
  throw new Error(`unexpected AnyValue ${JSON.stringify(v)}`);
}

const attrs = (list: unknown): Record<string, unknown> => Object.fromEntries(((list ?? []) as Array<{ key: string; value: Record<string, unknown> }>).map((a) => [a.key, anyValue(a.value)]));

/** The spans of a decoded request, in one normal form (hex ids, decimal nanosecond strings). */
export function normalSpans(message: protobuf.Message): NormalSpan[] {
  const { request } = otlpTypes();
  const o = request.toObject(message, { longs: String, bytes: String, enums: Number, defaults: true, arrays: true }) as {
    resourceSpans: Array<{ resource: { attributes: unknown }; scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }>;
  };
  const hex = (b64: unknown) => Buffer.from(String(b64), "base64").toString("hex");
  const out: NormalSpan[] = [];
  for (const rs of o.resourceSpans)
    for (const ss of rs.scopeSpans)
      for (const s of ss.spans)
        out.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: s.name as string,
          kind: s.kind as number,
          start: s.startTimeUnixNano as string,
          end: s.endTimeUnixNano as string,
          attributes: attrs(s.attributes),
          events: ((s.events ?? []) as Array<Record<string, unknown>>).map((e) => ({ name: e.name as string, time: e.timeUnixNano as string, attributes: attrs(e.attributes) })),
          status: (s.status as { code: number }).code,
          resource: attrs(rs.resource.attributes),
        });
  return out.sort((a, b) => (a.spanId < b.spanId ? -1 : 1));
}

export interface ReceivedRequest {
  headers: IncomingMessage["headers"];
  url: string;
  spans: NormalSpan[];
}

/** How the receiver answers the nth request (0-based): a status, an optional partial success, or no answer. */
export type Answer = { status: number; rejectedSpans?: number; errorMessage?: string; retryAfter?: string } | "hang" | "stall-body";

/** A loopback OTLP/HTTP receiver on 127.0.0.1 (protobuf requests, decoded with the official definitions). */
export async function startOtlpReceiver(answer: (n: number) => Answer = () => ({ status: 200 })): Promise<{ url: string; received: ReceivedRequest[]; attempts: number; close: () => Promise<void> }> {
  const { request, response } = otlpTypes();
  const state = { received: [] as ReceivedRequest[], attempts: 0 };
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const n = state.attempts++;
      const a = answer(n);
      if (a === "hang" || a === "stall-body") {
        // No answer at all, or headers and the start of a body that never ends.
        if (a === "stall-body") res.writeHead(200, { "content-type": "application/x-protobuf" }).write(Buffer.from([0x0a]));
        hanging.push(res);
        return;
      }
      if (req.method !== "POST" || req.headers["content-type"] !== "application/x-protobuf") {
        res.writeHead(415).end();
        return;
      }
      if (a.status === 200) state.received.push({ headers: req.headers, url: req.url ?? "", spans: normalSpans(request.decode(Buffer.concat(chunks))) });
      const body = a.rejectedSpans !== undefined ? response.encode(response.fromObject({ partialSuccess: { rejectedSpans: a.rejectedSpans, errorMessage: a.errorMessage ?? "" } })).finish() : response.encode(response.create({})).finish();
      res.writeHead(a.status, { "content-type": "application/x-protobuf", ...(a.retryAfter ? { "retry-after": a.retryAfter } : {}) }).end(Buffer.from(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received: state.received,
    get attempts() {
      return state.attempts;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const h of hanging) h.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
