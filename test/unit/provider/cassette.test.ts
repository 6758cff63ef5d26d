import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  CASSETTE_FORMAT,
  CassetteError,
  SseParser,
  cassetteReplay,
  loadCassette,
  parseCassette,
  recordCassette,
  summarizeRequest,
} from "../../../handwritten/extensions/provider/index.js";
import { REPO_ROOT } from "../../support/paths.js";

const DIR = join(REPO_ROOT, "test/fixtures/provider/cassettes");

describe("cassettes", () => {
  it("the committed cassettes load and replay as a valid SSE stream ending in [DONE]", () => {
    for (const name of ["text-answer.json", "tool-calls-with-usage.json"]) {
      const cassette = loadCassette(join(DIR, name));
      expect(cassette.format).toBe(CASSETTE_FORMAT);
      const replay = cassetteReplay(cassette, { timeScale: 0 });
      expect(replay.status).toBe(200);
      expect(replay.chunks.every((c) => c.delayMs === 0)).toBe(true);
      const parser = new SseParser();
      const data = replay.chunks.flatMap((c) => parser.push(c.data)).concat(parser.end()).map((e) => e.data);
      expect(data.at(-1)).toBe("[DONE]");
      for (const d of data.slice(0, -1)) expect(() => JSON.parse(d)).not.toThrow();
    }
  });

  it("keeps chunks that split a multi-byte character as exact bytes", () => {
    const cassette = loadCassette(join(DIR, "text-answer.json"));
    expect(cassette.response.chunks.some((c) => c.base64 !== undefined)).toBe(true);
    const bytes = Buffer.concat(cassetteReplay(cassette).chunks.map((c) => c.data));
    expect(bytes.toString("utf8")).toContain("naïve ✓");
  });

  it("rejects malformed cassettes and sensitive headers", () => {
    const good = loadCassette(join(DIR, "text-answer.json"));
    expect(() => parseCassette({ ...good, format: "other" })).toThrow(CassetteError);
    expect(() => parseCassette({ ...good, response: { ...good.response, headers: { Authorization: "Bearer x" } } })).toThrow(/sensitive/);
    expect(() => parseCassette({ ...good, response: { ...good.response, chunks: [{ after_ms: 0 }] } })).toThrow(/exactly one/);
    expect(() => parseCassette({ ...good, response: { ...good.response, status: 42 } })).toThrow(CassetteError);
    expect(() => parseCassette(null)).toThrow(CassetteError);
  });

  it("records captured traffic without credentials and round-trips through JSON", () => {
    const summary = summarizeRequest({
      agent_id: "a",
      prompt_id: "p",
      round: 0,
      model: "m",
      system: "secret system prompt",
      messages: [{ role: "user", text: "secret user text" }],
      tools: [{ name: "shell", description: "d", parameters: {} }],
    });
    expect(summary).toEqual({ method: "POST", path: "/v1/chat/completions", model: "m", message_roles: ["system", "user"], tools: ["shell"] });
    const euro = Buffer.from("€", "utf8");
    const recorded = recordCassette({
      name: "captured",
      request: summary,
      status: 200,
      headers: { "Content-Type": "text/event-stream", "Set-Cookie": ["a=b"], authorization: "Bearer sk-x", "x-request-id": "r1" },
      chunks: [
        { data: Buffer.concat([Buffer.from("data: "), euro.subarray(0, 1)]), afterMs: 0 },
        { data: Buffer.concat([euro.subarray(1), Buffer.from("\n\n")]), afterMs: 3 },
      ],
    });
    const text = JSON.stringify(recorded);
    expect(text).not.toContain("secret");
    expect(text).not.toContain("sk-x");
    expect(recorded.response.headers).toEqual({ "content-type": "text/event-stream", "x-request-id": "r1" });
    const back = parseCassette(JSON.parse(text));
    expect(Buffer.concat(cassetteReplay(back).chunks.map((c) => c.data)).toString("utf8")).toBe("data: €\n\n");
  });
});
