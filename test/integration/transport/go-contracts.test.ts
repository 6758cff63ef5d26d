// The generated Go package (generated/sdk/go/tauprotocol) through a real Go CBOR library: frames a
// real daemon delivered in a real session decode strictly into the package's types with
// github.com/fxamacker/cbor and encode again to what the harness sent; a required list left unset
// is written empty, never null. Needs `go` and Debian's golang-github-fxamacker-cbor-dev (.ci/run
// installs both); without them the tests are skipped, saying so.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import type * as CborX from "cbor-x";
import { FrameReader, REVISION, decodeCbor, encodeFrame, parseMessage } from "../../../handwritten/protocol/index.js";
import { waitFor } from "../../support/daemon.js";
import { daemonIn, fakeOpenAIIn, providerHome, useCleanups } from "../../support/e2e.js";
import { textResponse } from "../../support/fake-openai.js";
import { REPO_ROOT } from "../../support/paths.js";

const GO_CBOR_SOURCE = "/usr/share/gocode/src/github.com/fxamacker/cbor";
const FLOAT16_SOURCE = "/usr/share/gocode/src/github.com/x448/float16";
const hasGo = spawnSync("go", ["version"]).error === undefined && existsSync(GO_CBOR_SOURCE) && existsSync(FLOAT16_SOURCE);
const SKIP = "needs `go` and Debian's golang-github-fxamacker-cbor-dev (apt-get install golang-go golang-github-fxamacker-cbor-dev)";

const cleanups = useCleanups();

/** A Go module beside the generated package, resolved offline from the Debian sources. */
let goDir = "";
let roundTripBin = "";
beforeAll(() => {
  if (!hasGo) return;
  goDir = mkdtempSync(join(tmpdir(), "tau-go-"));
  writeFileSync(
    join(goDir, "go.mod"),
    [
      "module tautest",
      "",
      "go 1.19",
      "",
      "require (",
      "\tgithub.com/fxamacker/cbor/v2 v2.4.0",
      "\ttau/tauprotocol v0.0.0",
      ")",
      "",
      `replace tau/tauprotocol => ${join(REPO_ROOT, "generated", "sdk", "go", "tauprotocol")}`,
      "",
      `replace github.com/fxamacker/cbor/v2 => ${GO_CBOR_SOURCE}`,
      "",
      `replace github.com/x448/float16 => ${FLOAT16_SOURCE}`,
      "",
    ].join("\n"),
  );
  roundTripBin = join(goDir, "roundtrip");
  go(["build", "-o", roundTripBin, join(REPO_ROOT, "test", "fixtures", "go-roundtrip", "main.go")]);
}, 120_000);
afterAll(() => {
  if (goDir) rmSync(goDir, { recursive: true, force: true });
});

/** Runs `go` in the test module, offline (no module proxy is reachable here), failing on an error. */
function go(args: string[]): Buffer {
  const r = spawnSync("go", args, { cwd: goDir, env: { ...process.env, GOFLAGS: "-mod=mod", GOPROXY: "off" } });
  if (r.status !== 0) throw new Error(`go ${args.join(" ")} failed (${r.status}):\n${r.stderr.toString()}`);
  return r.stdout;
}

function framesOf(bytes: Buffer): unknown[] {
  return new FrameReader().push(bytes).map((f) => {
    if (!f.ok) throw f.error;
    return f.value;
  });
}

function roundTrip(frames: Buffer[]): unknown[] {
  const r = spawnSync(roundTripBin, [], { input: Buffer.concat(frames), maxBuffer: 64 * 1024 * 1024 });
  expect(r.stderr.toString()).toBe("");
  expect(r.status).toBe(0);
  return framesOf(r.stdout);
}

/** A UI on a raw socket: keeps every frame's bytes as they arrived, beside its decoded value. */
class RawUi {
  readonly frames: Array<{ raw: Buffer; value: Record<string, unknown> }> = [];
  private pending = Buffer.alloc(0);
  private constructor(private readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 4 && this.pending.length >= 4 + this.pending.readUInt32BE(0)) {
        const raw = this.pending.subarray(0, 4 + this.pending.readUInt32BE(0));
        this.pending = this.pending.subarray(raw.length);
        this.frames.push({ raw: Buffer.from(raw), value: decodeCbor(raw.subarray(4)) as Record<string, unknown> });
      }
    });
  }

  static async attach(path: string): Promise<RawUi> {
    const socket = connect(path);
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    const ui = new RawUi(socket);
    ui.send({ message: "hello", payload: { revision: { ...REVISION }, role: "ui" } });
    await waitFor(() => ui.frames.some((f) => f.value.message === "ui_session_accepted"), "the session to accept the UI");
    return ui;
  }

  send(message: unknown): void {
    this.socket.write(encodeFrame(message));
  }

  deliveries(name?: string): Array<{ raw: Buffer; value: Record<string, unknown> }> {
    return this.frames.filter((f) => f.value.message === "deliver" && (name === undefined || (f.value.payload as { event: { name: string } }).event.name === name));
  }

  close(): void {
    this.socket.destroy();
  }
}

describe("the Go contracts through a Go CBOR library", () => {
  it("[sdk.go.contracts-round-trip] decode every frame a real daemon delivered in a session, strictly, and encode it again unchanged", async (ctx) => {
    if (!hasGo) return ctx.skip(SKIP);
    const fake = await fakeOpenAIIn(cleanups);
    const h = providerHome(cleanups, fake);
    const d = await daemonIn(cleanups, h.env);
    const ui = await RawUi.attach(d.socket);
    cleanups.push(() => ui.close());
    ui.send({ message: "subscribe", payload: { historical: ["*"], live: ["*"] } });
    await waitFor(() => ui.deliveries("harness.models_available").length > 0, "the models", 30_000);
    ui.send({ message: "emit", payload: { event: { name: "ui.create_agent", data: { request_id: "r" } } } });
    await waitFor(() => ui.frames.some((f) => f.value.message === "direct"), "the new agent");
    const created = ui.frames.find((f) => f.value.message === "direct")?.value.payload as { event: { data: { agent_id: string } } };
    for (let run = 1; run <= 2; run++) {
      fake.enqueue(textResponse(["Hello", ", world ", String(run)], { usage: { prompt_tokens: 12, completion_tokens: 3 } }));
      ui.send({ message: "emit", payload: { event: { name: "ui.prompt_submit", data: { agent_id: created.event.data.agent_id, mode: "queue", text: `run ${run}` } } } });
      await waitFor(() => ui.deliveries("agent.outer_turn_finished").length === run, `run ${run} to finish`, 30_000);
    }
    const delivered = ui.deliveries();
    const carried = ui.frames.filter((f) => f.value.message === "deliver" || f.value.message === "direct");
    expect(delivered.length).toBeGreaterThan(20);

    const back = roundTrip(carried.map((f) => f.raw));
    const expected = carried.flatMap((f) => [f.value, (f.value.payload as { event: { data: unknown } }).event.data]);
    expect(back.filter((b) => (b as { error?: string }).error !== undefined)).toEqual([]);
    expect(back).toHaveLength(expected.length);
    // One assertion per frame, so a failure names the message or event whose Go type is wrong.
    back.forEach((b, i) => expect(b, JSON.stringify(expected[i]).slice(0, 200)).toEqual(expected[i]));
    for (const f of back.filter((_, i) => i % 2 === 0)) expect(parseMessage(f, "peer"), JSON.stringify(f).slice(0, 200)).toMatchObject({ ok: true });
    const names = new Set(delivered.map((f) => (f.value.payload as { event: { name: string } }).event.name));
    for (const name of ["session.started", "agent.started", "agent.prompt_submitted", "agent.prompt_started", "provider.response_finished", "agent.stats_updated", "agent.outer_turn_finished"]) {
      expect(names, name).toContain(name);
    }
  }, 120_000);

  it("[sdk.go.contracts-round-trip] refuse a delivery whose recorded_at is a float, as tau wrote them before", (ctx) => {
    if (!hasGo) return ctx.skip(SKIP);
    const deliver = { message: "deliver", payload: { event: { name: "ui.focus", data: { focused: true } }, seq: 3, recorded_at: 1_764_547_200_123_456, publisher: { class: "ui_attached", generation: 2 } } };
    // cbor-x on its own writes a number from 2^32 up as a float64, as tau's encoder did.
    const { Encoder } = createRequire(import.meta.url)("cbor-x/index-no-eval") as typeof CborX;
    const body = Buffer.from(new Encoder({ useRecords: false, mapsAsObjects: true, tagUint8Array: false }).encode(deliver) as Uint8Array);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length);
    const [old] = roundTrip([Buffer.concat([header, body])]);
    expect((old as { error: string }).error).toMatch(/^deliver: cbor: cannot unmarshal primitives into Go struct field .* of type int64$/);
    const [now, data] = roundTrip([encodeFrame(deliver)]);
    expect([now, data]).toEqual([deliver, deliver.payload.event.data]);
  });

  it("[sdk.go.contracts-round-trip] write a required list or map left unset as an empty one, never null", (ctx) => {
    if (!hasGo) return ctx.skip(SKIP);
    writeFileSync(
      join(goDir, "unset.go"),
      [
        "package main",
        "",
        "import (",
        '\t"encoding/json"',
        '\t"os"',
        "",
        '\t"github.com/fxamacker/cbor/v2"',
        '\ttp "tau/tauprotocol"',
        ")",
        "",
        "func main() {",
        "\tmessage := tp.EmitMessage{Message: tp.Emit, Payload: tp.EmitMessagePayload{Event: tp.EventEnvelope{Name: \"tool.registration_declared\"}}}",
        "\tbody, err := cbor.Marshal(message)",
        "\tif err != nil {",
        "\t\tpanic(err)",
        "\t}",
        "\tos.Stdout.Write(body)",
        "\ttext, err := json.Marshal(tp.SubscribeMessagePayload{})",
        "\tif err != nil {",
        "\t\tpanic(err)",
        "\t}",
        "\tos.Stdout.Write(append([]byte{'\\n'}, text...))",
        "}",
        "",
      ].join("\n"),
    );
    cleanups.push(() => rmSync(join(goDir, "unset.go")));
    const out = go(["run", "unset.go"]);
    const cut = out.lastIndexOf(0x0a);
    expect(decodeCbor(out.subarray(0, cut))).toEqual({ message: "emit", payload: { event: { name: "tool.registration_declared", data: {} } } });
    expect(JSON.parse(out.subarray(cut + 1).toString("utf8"))).toMatchObject({ historical: [], live: [] });
  });
});
