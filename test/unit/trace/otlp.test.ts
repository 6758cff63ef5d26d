// The OTLP projection: its JSON lines and its protobuf requests decode with the official
// opentelemetry-proto definitions to the same spans; one trace per prompt with provider and tool
// spans and GenAI semantic-convention attributes; prompts a prefix ends inside are marked.
import { cpSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import * as semconv from "@opentelemetry/semantic-conventions/incubating";
import { describe, expect, it } from "vitest";
import { useTempDirs } from "../../support/temp-dirs.js";
import { GEN_AI, OtlpProjection, exportTrace, loadOtlp, networkFailure, otlpEndpoint, postTrace, type PriceOf } from "../../../handwritten/trace/index.js";
import { createServer } from "node:net";
import type { Event } from "../../../handwritten/protocol/index.js";
import { FIXTURE_AGENT } from "../../fixtures/trace/make-fixture.js";
import { REPO_ROOT } from "../../support/paths.js";
import { decodeOtlpJson, normalSpans, otlpTypes, type NormalSpan } from "../../support/otlp.js";

const tempDir = useTempDirs("tau-otlp-");

function fixtureState(): string {
  const dir = tempDir();
  cpSync(join(REPO_ROOT, "test", "fixtures", "trace", "state"), join(dir, "state"), { recursive: true });
  return join(dir, "state");
}

const gpt41mini: PriceOf = (m) => (m === "gpt-4.1-mini" ? { input_cost: 0.4, output_cost: 1.6, cached_input_cost: 0.1 } : undefined);

async function otlpLines(stateDir: string): Promise<string[]> {
  let text = "";
  const sink = new Writable({ write: (c: Buffer, _e, cb) => ((text += c.toString("utf8")), cb()) });
  await exportTrace({ stateDir, agentId: FIXTURE_AGENT, format: "otlp", priceOf: gpt41mini }, sink);
  return text.split("\n").slice(0, -1);
}

describe("OTLP projection", () => {
  it("[trace.otlp.proto-decodes] every OTLP JSON line decodes with the official protobuf definitions, to the same spans as the protobuf requests", async () => {
    const state = fixtureState();
    const lines = await otlpLines(state);
    expect(lines).toHaveLength(4); // one trace per prompt
    const fromJson: NormalSpan[] = [];
    for (const line of lines) {
      const spans = normalSpans(decodeOtlpJson(JSON.parse(line)));
      expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
      fromJson.push(...spans);
    }
    const requests: Uint8Array[] = [];
    const report = await postTrace({ stateDir: state, agentId: FIXTURE_AGENT, priceOf: gpt41mini }, async (r) => void requests.push(r));
    expect(report.requests).toBe(1);
    const fromProto = requests.flatMap((r) => normalSpans(otlpTypes().request.decode(r)));
    const bySpan = (s: NormalSpan[]) => [...s].sort((a, b) => (a.spanId < b.spanId ? -1 : 1));
    expect(bySpan(fromProto)).toEqual(bySpan(fromJson));
    expect(report.spans).toBe(fromJson.length);
    // A field the definitions do not have is refused by the check itself.
    expect(() => decodeOtlpJson({ resourceSpans: [{ notAField: 1 }] })).toThrow(/no such field/);
  });

  it("[trace.otlp.proto-decodes] spans: an invoke_agent root per prompt, chat spans per round and execute_tool spans per call, with GenAI attributes", async () => {
    const spans = (await otlpLines(fixtureState())).flatMap((l) => normalSpans(decodeOtlpJson(JSON.parse(l))));
    const roots = spans.filter((s) => s.parentSpanId === "");
    expect(roots.map((r) => r.attributes["tau.prompt.id"]).sort()).toEqual(["p-1", "p-2", "p-3", "p-4"]);
    for (const s of spans) {
      const root = roots.find((r) => r.traceId === s.traceId) as NormalSpan;
      if (s !== root) expect(s.parentSpanId).toBe(root.spanId);
      expect(BigInt(s.end)).toBeGreaterThanOrEqual(BigInt(s.start));
      expect(s.resource[GEN_AI.serviceName]).toBe("tau");
    }
    const p1 = roots.find((r) => r.attributes["tau.prompt.id"] === "p-1") as NormalSpan;
    const p1Spans = spans.filter((s) => s.traceId === p1.traceId);
    expect(p1Spans.map((s) => s.name).sort()).toEqual(["chat fixture-model", "chat fixture-model", "execute_tool read", "execute_tool shell", "invoke_agent tau"]);
    expect(p1.attributes).toMatchObject({ [GEN_AI.operation]: "invoke_agent", [GEN_AI.agentId]: FIXTURE_AGENT, [GEN_AI.inputTokens]: 10_200, [GEN_AI.outputTokens]: 65, "tau.prompt.outcome": "completed" });
    const round0 = p1Spans.find((s) => s.attributes["tau.round"] === 0) as NormalSpan;
    expect(round0.kind).toBe(3); // SPAN_KIND_CLIENT
    expect(round0.attributes).toMatchObject({ [GEN_AI.operation]: "chat", [GEN_AI.requestModel]: "fixture-model", [GEN_AI.responseModel]: "fixture-model", [GEN_AI.finishReasons]: ["tool_calls"], [GEN_AI.inputTokens]: 1200, [GEN_AI.outputTokens]: 40, [GEN_AI.cacheReadTokens]: 1000, [GEN_AI.reasoningTokens]: 12 });
    const failedTool = p1Spans.find((s) => s.name === "execute_tool read") as NormalSpan;
    expect([failedTool.status, failedTool.attributes[GEN_AI.errorType], failedTool.attributes[GEN_AI.toolCallId]]).toEqual([2, "tool_error", "c-2"]);
    const p2 = roots.find((r) => r.attributes["tau.prompt.id"] === "p-2") as NormalSpan;
    expect(p2.status).toBe(2);
    expect(spans.find((s) => s.traceId === p2.traceId && s !== p2)?.attributes[GEN_AI.errorType]).toBe("rate_limited");
    // Cost: recorded by the harness for p-4's second round, estimated from the price for its first.
    const p4 = roots.find((r) => r.attributes["tau.prompt.id"] === "p-4") as NormalSpan;
    const p4Chats = spans.filter((s) => s.traceId === p4.traceId && s.name.startsWith("chat")).sort((a, b) => Number(a.attributes["tau.round"]) - Number(b.attributes["tau.round"]));
    expect(p4Chats.map((s) => [s.attributes["tau.usage.cost_usd"], s.attributes["tau.usage.cost_source"]])).toEqual([
      [(0.4 * 12_000 + 0.1 * 8000 + 1.6 * 100) / 1e6, "model_info"],
      [0.008096, "journal"],
    ]);
    expect(p4Chats[0]?.events.map((e) => e.name)).toEqual(["tau.retry_scheduled"]);
    expect(p4.attributes["tau.usage.cost_usd"]).toBeCloseTo(0.013856, 12);
  });

  it("[trace.otlp.proto-decodes] trace and span ids are derived from the journal: the same export twice names the same spans", async () => {
    const state = fixtureState();
    expect(await otlpLines(state)).toEqual(await otlpLines(state));
  });

  it("[trace.otlp.proto-decodes] the attribute names are the GenAI semantic conventions' own", () => {
    const c = semconv as Record<string, unknown>;
    expect(GEN_AI).toMatchObject({
      operation: c.ATTR_GEN_AI_OPERATION_NAME,
      providerName: c.ATTR_GEN_AI_PROVIDER_NAME,
      agentId: c.ATTR_GEN_AI_AGENT_ID,
      agentName: c.ATTR_GEN_AI_AGENT_NAME,
      conversationId: c.ATTR_GEN_AI_CONVERSATION_ID,
      requestModel: c.ATTR_GEN_AI_REQUEST_MODEL,
      requestStream: c.ATTR_GEN_AI_REQUEST_STREAM,
      responseModel: c.ATTR_GEN_AI_RESPONSE_MODEL,
      finishReasons: c.ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
      inputTokens: c.ATTR_GEN_AI_USAGE_INPUT_TOKENS,
      outputTokens: c.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
      cacheReadTokens: c.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
      cacheCreationTokens: c.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
      reasoningTokens: c.ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
      toolName: c.ATTR_GEN_AI_TOOL_NAME,
      toolCallId: c.ATTR_GEN_AI_TOOL_CALL_ID,
      toolType: c.ATTR_GEN_AI_TOOL_TYPE,
      errorType: c.ATTR_ERROR_TYPE,
      serverAddress: c.ATTR_SERVER_ADDRESS,
      serverPort: c.ATTR_SERVER_PORT,
      serviceName: c.ATTR_SERVICE_NAME,
    });
    // Every name is one the conventions define (no constant was left undefined above).
    for (const name of Object.values(GEN_AI)) expect(Object.values(c), name).toContain(name);
    expect([c.GEN_AI_OPERATION_NAME_VALUE_CHAT, c.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL, c.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT]).toEqual(["chat", "execute_tool", "invoke_agent"]);
  });

  it("[trace.otlp.proto-decodes] a prompt the prefix ends inside is emitted at the end, its open spans ending at the last record and marked incomplete", async () => {
    const otlp = await loadOtlp();
    const emitted: unknown[][] = [];
    const p = new OtlpProjection((s) => emitted.push(s));
    const ev = (name: string, data: Record<string, unknown>) => ({ name, data }) as unknown as Event;
    p.add(ev("agent.started", { agent_id: "a-1", session_id: "s-1", creator: "ui", cwd: "/", ephemeral: false }), 1_000);
    p.add(ev("agent.prompt_submitted", { agent_id: "a-1", prompt_id: "p-1", source: "human_ui", mode: "queue", text: "x" }), 2_000);
    p.add(ev("agent.prompt_started", { agent_id: "a-1", prompt_id: "p-1", round: 0 }), 3_000);
    p.add(ev("provider.response_finished", { agent_id: "a-1", prompt_id: "p-1", round: 0, model: "m", text: "", tool_calls: [{ call_id: "c-1", tool: "shell", arguments_json: "{}" }], finish_reason: "tool_calls" }), 5_000);
    expect(emitted).toHaveLength(0);
    p.end();
    expect(emitted).toHaveLength(1);
    const spans = normalSpans(otlpTypes().request.decode(otlp.protobuf.serializeRequest(emitted[0] as unknown[]) as Uint8Array));
    const root = spans.find((s) => s.parentSpanId === "") as NormalSpan;
    expect(root.attributes).toMatchObject({ "tau.incomplete": true, "tau.prompt.outcome": "unfinished" });
    const tool = spans.find((s) => s.name === "execute_tool shell") as NormalSpan;
    expect([tool.start, tool.end, tool.attributes["tau.incomplete"]]).toEqual(["5000000", "5000000", true]);
  });
});

describe("a collector that cannot be reached", () => {
  /** What fetch threw for `url`. */
  async function fetchError(url: string): Promise<unknown> {
    try {
      await fetch(url, { method: "POST", signal: AbortSignal.timeout(10_000) });
    } catch (err) {
      return err;
    }
    throw new Error(`${url} answered`);
  }

  it("[trace.otlp.post-errors] is named by what went wrong, said plainly with its code, never by an error class", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    await new Promise((r) => server.close(r)); // nothing listens there now
    for (const host of ["127.0.0.1", "localhost"]) {
      const ep = otlpEndpoint(`http://${host}:${port}`, {});
      expect(networkFailure(await fetchError(ep.url.href), ep)).toBe(`connection refused to http://${host}:${port}/v1/traces (ECONNREFUSED)`);
    }
    // A port fetch will not connect to fails without a system error code.
    const blocked = otlpEndpoint("http://127.0.0.1:1/", {});
    expect(networkFailure(await fetchError(blocked.url.href), blocked)).toBe("port 1 is one fetch never connects to (http://127.0.0.1:1/v1/traces)");
    const unknownHost = otlpEndpoint("http://no-such-host.invalid:4318", {});
    expect(networkFailure(await fetchError(unknownHost.url.href), unknownHost)).toMatch(/^(host not found|host name lookup failed) to http:\/\/no-such-host\.invalid:4318\/v1\/traces \((ENOTFOUND|EAI_AGAIN)\)$/);
    // Nothing to go on: said so, not "(TypeError)".
    expect(networkFailure(new TypeError("fetch failed"), blocked)).toBe("network error reaching http://127.0.0.1:1/v1/traces (no system error code)");
  });
});
