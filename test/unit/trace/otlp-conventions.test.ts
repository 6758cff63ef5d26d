// The OTLP projection against the OpenTelemetry GenAI semantic conventions: for each span kind tau
// writes, every attribute the conventions require or recommend (named by
// @opentelemetry/semantic-conventions' own incubating constants) is either set by tau on the spans
// of the committed fixture, or listed in SPEC-trace-export as one tau cannot know, with the reason;
// required ones are on every span of the kind, conditional ones wherever their condition holds.
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import * as c from "@opentelemetry/semantic-conventions/incubating";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportTrace, providerName } from "../../../handwritten/trace/index.js";
import { FIXTURE_AGENT } from "../../fixtures/trace/make-fixture.js";
import { REPO_ROOT } from "../../support/paths.js";
import { decodeOtlpJson, normalSpans, type NormalSpan } from "../../support/otlp.js";

type SpanKind = "invoke_agent" | "chat" | "execute_tool";
/** `always`: on every span of the kind; `when`: on the spans the condition picks; `some`: on at least one. */
type Rule = { readonly level: "required" | "conditional" | "recommended"; readonly on?: (s: NormalSpan) => boolean };

const failed = (s: NormalSpan) => s.status === 2;
const reachedProvider = (s: NormalSpan) => Number(s.attributes["tau.prompt.rounds"]) > 0;
const hasServer = (s: NormalSpan) => s.attributes[c.ATTR_SERVER_ADDRESS] !== undefined;
const required = (on?: (s: NormalSpan) => boolean): Rule => ({ level: "required", ...(on ? { on } : {}) });
const conditional = (on?: (s: NormalSpan) => boolean): Rule => ({ level: "conditional", ...(on ? { on } : {}) });
const recommended: Rule = { level: "recommended" };

// The conventions' attribute tables (GenAI spans: inference `chat`, invoke agent (internal), execute tool).
const REQUEST_SETTINGS = [
  c.ATTR_GEN_AI_REQUEST_FREQUENCY_PENALTY,
  c.ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  c.ATTR_GEN_AI_REQUEST_PRESENCE_PENALTY,
  c.ATTR_GEN_AI_REQUEST_STOP_SEQUENCES,
  c.ATTR_GEN_AI_REQUEST_TEMPERATURE,
  c.ATTR_GEN_AI_REQUEST_TOP_P,
];
const CONVENTIONS: Record<SpanKind, Record<string, Rule>> = {
  chat: {
    [c.ATTR_GEN_AI_OPERATION_NAME]: required(),
    [c.ATTR_GEN_AI_PROVIDER_NAME]: required(),
    [c.ATTR_ERROR_TYPE]: conditional(failed),
    [c.ATTR_GEN_AI_CONVERSATION_ID]: conditional(() => true),
    [c.ATTR_GEN_AI_OUTPUT_TYPE]: conditional(),
    [c.ATTR_GEN_AI_REQUEST_CHOICE_COUNT]: conditional(),
    [c.ATTR_GEN_AI_REQUEST_MODEL]: conditional(() => true),
    [c.ATTR_GEN_AI_REQUEST_SEED]: conditional(),
    [c.ATTR_GEN_AI_REQUEST_STREAM]: conditional(() => true), // every round of the fixture was streamed
    [c.ATTR_GEN_AI_REQUEST_TOP_K]: conditional(),
    [c.ATTR_SERVER_PORT]: conditional(hasServer),
    ...Object.fromEntries(REQUEST_SETTINGS.map((a) => [a, recommended])),
    [c.ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: recommended,
    [c.ATTR_GEN_AI_RESPONSE_ID]: recommended,
    [c.ATTR_GEN_AI_RESPONSE_MODEL]: recommended,
    [c.ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK]: recommended,
    [c.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: recommended,
    [c.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: recommended,
    [c.ATTR_GEN_AI_USAGE_INPUT_TOKENS]: recommended,
    [c.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: recommended,
    [c.ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS]: recommended,
    [c.ATTR_SERVER_ADDRESS]: recommended,
  },
  invoke_agent: {
    [c.ATTR_GEN_AI_OPERATION_NAME]: required(),
    [c.ATTR_GEN_AI_PROVIDER_NAME]: required(reachedProvider),
    [c.ATTR_ERROR_TYPE]: conditional(failed),
    [c.ATTR_GEN_AI_AGENT_DESCRIPTION]: conditional(),
    [c.ATTR_GEN_AI_AGENT_ID]: conditional(() => true),
    [c.ATTR_GEN_AI_AGENT_NAME]: conditional(() => true),
    [c.ATTR_GEN_AI_AGENT_VERSION]: conditional(),
    [c.ATTR_GEN_AI_CONVERSATION_ID]: conditional(() => true),
    [c.ATTR_GEN_AI_DATA_SOURCE_ID]: conditional(),
    [c.ATTR_GEN_AI_OUTPUT_TYPE]: conditional(),
    [c.ATTR_GEN_AI_REQUEST_CHOICE_COUNT]: conditional(),
    [c.ATTR_GEN_AI_REQUEST_MODEL]: conditional(reachedProvider),
    [c.ATTR_GEN_AI_REQUEST_SEED]: conditional(),
    ...Object.fromEntries(REQUEST_SETTINGS.map((a) => [a, recommended])),
    [c.ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: recommended,
    [c.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: recommended,
    [c.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: recommended,
    [c.ATTR_GEN_AI_USAGE_INPUT_TOKENS]: recommended,
    [c.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: recommended,
  },
  execute_tool: {
    [c.ATTR_GEN_AI_OPERATION_NAME]: required(),
    [c.ATTR_GEN_AI_TOOL_NAME]: required(),
    [c.ATTR_ERROR_TYPE]: conditional(failed),
    [c.ATTR_GEN_AI_TOOL_CALL_ID]: recommended,
    [c.ATTR_GEN_AI_TOOL_DESCRIPTION]: recommended,
    [c.ATTR_GEN_AI_TOOL_TYPE]: recommended,
  },
};

/** SPEC-trace-export's table "What the conventions ask that tau cannot say": span kind → attributes. */
function cannotSay(): Map<SpanKind, Set<string>> {
  const spec = readFileSync(join(REPO_ROOT, "records", "SPEC-trace-export.md"), "utf8");
  const start = spec.indexOf("**What the conventions ask that tau cannot say**");
  expect(start).toBeGreaterThan(0);
  const rows = spec.slice(start).split("\n\n")[1]!.split("\n").slice(2);
  const out = new Map<SpanKind, Set<string>>();
  for (const row of rows) {
    const [, spans, attributes] = row.split("|").map((cell) => cell.trim());
    for (const span of [...spans!.matchAll(/`(\w+)`/g)].map((m) => m[1] as SpanKind)) {
      const set = out.get(span) ?? new Set<string>();
      for (const m of attributes!.matchAll(/`([\w.]+)`/g)) set.add(m[1]!);
      out.set(span, set);
    }
  }
  return out;
}

let dir = "";
let spans: NormalSpan[] = [];
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "tau-otlp-conv-"));
  cpSync(join(REPO_ROOT, "test", "fixtures", "trace", "state"), join(dir, "state"), { recursive: true });
  let text = "";
  const sink = new Writable({ write: (chunk: Buffer, _e, cb) => ((text += chunk.toString("utf8")), cb()) });
  await exportTrace({ stateDir: join(dir, "state"), agentId: FIXTURE_AGENT, format: "otlp" }, sink);
  spans = text.split("\n").filter(Boolean).flatMap((l) => normalSpans(decodeOtlpJson(JSON.parse(l))));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const kindOf = (s: NormalSpan): SpanKind => s.attributes[c.ATTR_GEN_AI_OPERATION_NAME] as SpanKind;

describe("OTLP spans and the GenAI semantic conventions", () => {
  for (const kind of ["invoke_agent", "chat", "execute_tool"] as const) {
    it(`[trace.otlp.conventions] ${kind}: every attribute the conventions require or recommend is set where tau knows it, and the rest are listed in the SPEC`, () => {
      const ofKind = spans.filter((s) => kindOf(s) === kind);
      expect(ofKind.length).toBeGreaterThan(1);
      const unknown = cannotSay().get(kind) ?? new Set<string>();
      const conventions = CONVENTIONS[kind];
      for (const attr of unknown) expect(Object.keys(conventions), `${attr} is listed as unknown but the conventions do not ask for it`).toContain(attr);
      for (const [attr, rule] of Object.entries(conventions)) {
        const setOn = ofKind.filter((s) => s.attributes[attr] !== undefined);
        if (unknown.has(attr)) {
          expect(setOn, `${kind} ${attr}: listed as unknown, yet set`).toEqual([]);
          continue;
        }
        expect(setOn.length, `${kind} ${attr}: tau knows it but sets it on no span`).toBeGreaterThan(0);
        const must = rule.on ?? (rule.level === "required" ? () => true : undefined);
        if (must) for (const s of ofKind.filter(must)) expect(s.attributes[attr], `${kind} ${attr} on ${s.name} (${s.spanId})`).toBeDefined();
      }
      // The listed attributes are exactly what the conventions ask and tau does not set.
      const unset = Object.keys(conventions).filter((a) => ofKind.every((s) => s.attributes[a] === undefined));
      expect(unset.sort()).toEqual([...unknown].sort());
    });
  }

  it("[trace.otlp.conventions] the provider name is a well-known value for a well-known host, the API flavour for tau's other endpoints, and the instance of another provider extension", () => {
    const ep = (api: string | undefined, server_address?: string) => ({ instance: "mine", ...(api ? { api } : {}), ...(server_address ? { server_address } : {}) });
    expect(providerName(ep("chat_completions", "api.groq.com"))).toBe("groq");
    expect(providerName(ep("chat_completions", "my-resource.openai.azure.com"))).toBe("azure.ai.openai");
    expect(providerName(ep("chat_completions", "generativelanguage.googleapis.com"))).toBe("gcp.gemini");
    expect(providerName(ep("responses", "API.OPENAI.COM"))).toBe("openai");
    expect(providerName(ep("chatgpt_ws", "chatgpt.com"))).toBe("openai");
    expect(providerName(ep("chat_completions", "127.0.0.1"))).toBe("openai");
    expect(providerName(ep("scripted"))).toBe("tau.scripted");
    expect(providerName(ep(undefined))).toBe("mine");
    // Each well-known value is one the conventions define.
    const wellKnown = Object.entries(c).filter(([k]) => k.startsWith("GEN_AI_PROVIDER_NAME_VALUE_")).map(([, v]) => v);
    for (const v of ["openai", "groq", "azure.ai.openai", "gcp.gemini"]) expect(wellKnown).toContain(v);
  });

  it("[trace.otlp.usage-absent] a prompt or round that reported no usage carries no token counts, never zeros", () => {
    const failedRoot = spans.find((s) => kindOf(s) === "invoke_agent" && s.attributes["tau.prompt.outcome"] === "failed") as NormalSpan;
    const failedChat = spans.find((s) => kindOf(s) === "chat" && s.traceId === failedRoot.traceId) as NormalSpan;
    for (const s of [failedRoot, failedChat]) {
      expect(Object.keys(s.attributes).filter((k) => k.startsWith("gen_ai.usage."))).toEqual([]);
    }
    const cancelledRoot = spans.find((s) => kindOf(s) === "invoke_agent" && s.attributes["tau.prompt.outcome"] === "cancelled") as NormalSpan;
    expect(Object.keys(cancelledRoot.attributes).filter((k) => k.startsWith("gen_ai.usage."))).toEqual([]);
    // A prompt whose rounds did report it sums them, each count only where reported.
    const completed = spans.find((s) => kindOf(s) === "invoke_agent" && s.attributes["tau.prompt.id"] === "p-4") as NormalSpan;
    expect(completed.attributes).toMatchObject({ [c.ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 40_200, [c.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 110, [c.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: 8000 });
    expect(completed.attributes[c.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]).toBeUndefined();
  });
});
