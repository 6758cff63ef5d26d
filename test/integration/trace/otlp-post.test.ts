// `tau agent trace --format otlp --otlp-endpoint URL` through the real binary, against a loopback
// OTLP/HTTP receiver that decodes each request with the official opentelemetry-proto definitions:
// accepted spans equal the printed OTLP JSON; retries are bounded; refusals, partial successes,
// timeouts and unreachable collectors fail with a clear message, exit 1 and nothing on stdout;
// credentials never appear in any output; a corrupt journal posts nothing.
import { cpSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURE_AGENT } from "../../fixtures/trace/make-fixture.js";
import { tauHome } from "../../support/daemon.js";
import { decodeOtlpJson, normalSpans, startOtlpReceiver, type Answer } from "../../support/otlp.js";
import { REPO_ROOT } from "../../support/paths.js";
import { runTau } from "../../support/run-tau.js";
import { useCleanups } from "../../support/e2e.js";
import { corruptJournalFrame, snapshotTree } from "../../support/files.js";

const cleanups = useCleanups();

const SECRET = "s3cr3t-token-value";
// Whatever the test runner's environment holds, these runs see only what each test sets.
const NO_OTEL = { OTEL_EXPORTER_OTLP_HEADERS: "", OTEL_EXPORTER_OTLP_TRACES_HEADERS: "", OTEL_EXPORTER_OTLP_TIMEOUT: "", OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: "" };

function fixtureHome(): { env: NodeJS.ProcessEnv; journal: string; state: string } {
  const h = tauHome();
  cleanups.push(h.dispose);
  cpSync(join(REPO_ROOT, "test", "fixtures", "trace", "state"), join(h.home, "state"), { recursive: true });
  return { env: { ...h.env, ...NO_OTEL }, journal: join(h.home, "state", "agents", FIXTURE_AGENT, "events.cbor"), state: join(h.home, "state") };
}

async function receiver(answer?: (n: number) => Answer) {
  const r = await startOtlpReceiver(answer);
  cleanups.push(r.close);
  return r;
}

const post = (url: string, env: NodeJS.ProcessEnv) => runTau(["agent", "trace", FIXTURE_AGENT, "--format", "otlp", "--otlp-endpoint", url], { env });

describe("tau agent trace --otlp-endpoint", () => {
  it("[trace.otlp.collector-accepts] a loopback OTLP/HTTP receiver on the official definitions accepts the trace: the same spans as the OTLP JSON output, headers from the environment", async () => {
    const f = fixtureHome();
    const rx = await receiver();
    const before = snapshotTree(f.state);
    const r = await post(`${rx.url}/?token=${SECRET}`, { ...f.env, OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${SECRET},x-tenant=t1` });
    expect(snapshotTree(f.state)).toEqual(before);
    expect(r.stdout).toBe("");
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^tau: posted 12 spans of 4 traces to http:\/\/127\.0\.0\.1:\d+\/v1\/traces in 1 request\n$/);
    expect(rx.received).toHaveLength(1);
    const got = rx.received[0];
    expect(got?.url).toBe(`/v1/traces?token=${SECRET}`);
    expect(got?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(got?.headers["x-tenant"]).toBe("t1");
    const printed = await runTau(["agent", "trace", FIXTURE_AGENT, "--format", "otlp"], { env: f.env });
    const fromJson = printed.stdout.split("\n").filter(Boolean).flatMap((l) => normalSpans(decodeOtlpJson(JSON.parse(l))));
    const order = (s: typeof fromJson) => [...s].sort((a, b) => (a.spanId < b.spanId ? -1 : 1));
    expect(order(got?.spans ?? [])).toEqual(order(fromJson));
    expect(r.stderr + r.stdout).not.toContain(SECRET);
  });

  it("[trace.otlp.post-errors] retryable answers are retried a bounded number of times, honouring Retry-After; then the request succeeds", async () => {
    const f = fixtureHome();
    const rx = await receiver((n) => (n < 2 ? { status: 503, retryAfter: "0" } : { status: 200 }));
    const r = await post(rx.url, f.env);
    expect([r.code, r.stdout]).toEqual([0, ""]);
    expect(rx.attempts).toBe(3);
    expect(rx.received).toHaveLength(1);
  });

  // One binary run per case (each several seconds on a loaded machine: retries wait up to 1.5 s).
  const refusals: Array<[string, (n: number) => Answer, RegExp, number]> = [
    ["a refusal", () => ({ status: 400 }), /answered HTTP 400\b/, 1],
    ["a retryable answer to the last attempt", () => ({ status: 503, retryAfter: "0" }), /answered HTTP 503 after 3 attempts/, 3],
    ["a partial success", () => ({ status: 200, rejectedSpans: 2, errorMessage: "too old\u001b[31m" }), /rejected 2 spans: too old\?\[31m/, 1],
    ["a redirect", () => ({ status: 302 }), /answered HTTP 302 \(a redirect, not followed\)/, 1],
    ["no answer", () => "hang", /did not answer within 300 ms/, 3],
    ["an answer that stalls mid-body", () => "stall-body", /did not answer within 300 ms/, 3],
  ];
  for (const [what, answer, message, attempts] of refusals) {
    it(`[trace.otlp.post-errors] ${what} fails with exit 1, a clear message naming the endpoint and no secret, after ${attempts} attempt(s)`, async () => {
      const f = fixtureHome();
      const env = { ...f.env, OTEL_EXPORTER_OTLP_TRACES_HEADERS: `authorization=${SECRET}`, OTEL_EXPORTER_OTLP_TIMEOUT: "300" };
      const rx = await receiver(answer);
      const r = await post(`${rx.url}/custom/path?key=${SECRET}`, env);
      expect([r.code, r.stdout]).toEqual([1, ""]);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toContain(`${rx.url}/custom/path`);
      expect(r.stderr).not.toContain(SECRET);
      expect(rx.attempts).toBe(attempts);
    }, 30_000);
  }

  it("[trace.otlp.post-errors] an unreachable collector fails with exit 1 and a clear message", async () => {
    const f = fixtureHome();
    // Nothing listens on a port just closed.
    const gone = await startOtlpReceiver();
    await gone.close();
    const refused = await post(gone.url, f.env);
    expect([refused.code, refused.stdout]).toEqual([1, ""]);
    expect(refused.stderr).toContain(`connection refused to ${gone.url}/v1/traces (ECONNREFUSED) after 3 attempts`);
  }, 30_000);

  it("[trace.otlp.post-errors] an endpoint that is not http(s), carries credentials, or malformed headers are refused before anything is read or sent", async () => {
    const f = fixtureHome();
    const rx = await receiver();
    const withUser = await post(rx.url.replace("http://", `http://user:${SECRET}@`), f.env);
    expect([withUser.code, withUser.stdout]).toEqual([1, ""]);
    expect(withUser.stderr).toMatch(/carries credentials; pass them in OTEL_EXPORTER_OTLP_HEADERS/);
    expect(withUser.stderr).not.toContain(SECRET);
    const ftp = await post("ftp://127.0.0.1/", f.env);
    expect(ftp.stderr).toMatch(/scheme must be http or https/);
    const badHeader = await post(rx.url, { ...f.env, OTEL_EXPORTER_OTLP_HEADERS: `no-equals-${SECRET}` });
    expect([badHeader.code, badHeader.stdout]).toEqual([1, ""]);
    expect(badHeader.stderr).toMatch(/OTEL_EXPORTER_OTLP_HEADERS: entry 1 is not a valid key=value header/);
    expect(badHeader.stderr).not.toContain(SECRET);
    const notOtlp = await runTau(["agent", "trace", FIXTURE_AGENT, "--format", "jsonl", "--otlp-endpoint", rx.url], { env: f.env });
    expect([notOtlp.code, notOtlp.stdout]).toEqual([1, ""]);
    expect(notOtlp.stderr).toMatch(/--otlp-endpoint needs --format otlp/);
    expect(rx.attempts).toBe(0);
  });

  it("[trace.otlp.post-errors] a corrupt frame inside the prefix posts nothing", async () => {
    const f = fixtureHome();
    corruptJournalFrame(f.journal, 20);
    const rx = await receiver();
    const r = await post(rx.url, f.env);
    expect([r.code, r.stdout]).toEqual([1, ""]);
    expect(r.stderr).toMatch(/corrupt frame at offset \d+/);
    expect(rx.attempts).toBe(0);
  });
});
