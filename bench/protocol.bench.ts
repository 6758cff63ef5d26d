// Wire codec throughput beside JSON doing the same work on the same messages, in the same run.
// Every figure is the median of interleaved rounds (see medianOpsPerSecond); one op = the four
// messages below, each as a length-prefixed frame in one Buffer, as a socket chunk delivers them.
// Decoding is compared with JSON doing the same framed work (the first JSON baseline), and with
// JSON.parse of ready-made strings as a stricter reference that skips framing and UTF-8 decoding.
import { FrameReader, MessageReader, encodeFrame, parseMessage, type Side } from "../handwritten/protocol/index.js";
import { fmt, medianOpsPerSecond } from "./support.js";

const text = "The quick brown fox jumps over the lazy dog. ".repeat(5);
// Each message with the side that accepts it, so the validated figures measure acceptance.
const MESSAGES: Array<[Side, unknown]> = [
  ["harness", { message: "hello", payload: { revision: { major: 1, minor: 0 }, role: "ui", session_id: "s-01J9Z3" } }],
  [
    "peer",
    {
      message: "deliver",
      payload: {
        event: { name: "provider.response_updated", data: { agent_id: "a-1", prompt_id: "p-7", round: 2, text_delta: text, reasoning_delta: "" } },
        seq: 1234,
        recorded_at: 1_780_000_000_000_000,
        publisher: { class: "harness" },
      },
    },
  ],
  ["harness", { message: "emit", payload: { event: { name: "tool.result_reported", data: { call_id: "c-42", output: "x".repeat(4096) } } } }],
  [
    "harness",
    {
      message: "emit",
      payload: {
        event: {
          name: "agent.stats_updated",
          data: { agent_id: "a-1", usage: { input_tokens: 12000, output_tokens: 800 }, cost_usd: 0.0123, context_tokens: 12800 },
        },
      },
    },
  ],
];

/** The same framing with a JSON body: 4-byte big-endian length, then UTF-8 JSON. */
function jsonFrame(value: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(value));
  const frame = Buffer.allocUnsafe(4 + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, 4);
  return frame;
}

/** The JSON counterpart of FrameReader.push on whole frames: lengths, UTF-8 decode, JSON.parse. */
function parseJsonFrames(stream: Buffer, out: unknown[]): unknown[] {
  out.length = 0;
  for (let off = 0; off < stream.length; ) {
    const len = stream.readUInt32BE(off);
    out.push(JSON.parse(stream.toString("utf8", off + 4, off + 4 + len)));
    off += 4 + len;
  }
  return out;
}

function stream(frames: Buffer[]): Buffer {
  return Buffer.concat(frames);
}

export async function run(): Promise<void> {
  const values = MESSAGES.map(([, m]) => m);
  const cbor = stream(values.map((m) => encodeFrame(m)));
  const json = stream(values.map(jsonFrame));
  const jsonStrings = values.map((m) => JSON.stringify(m));
  // For validation, each side's reader gets the frames addressed to it.
  const bySide = (side: Side, enc: (m: unknown) => Buffer): Buffer => stream(MESSAGES.filter(([s]) => s === side).map(([, m]) => enc(m)));
  const cborToHarness = bySide("harness", encodeFrame);
  const cborToPeer = bySide("peer", encodeFrame);
  const jsonToHarness = bySide("harness", jsonFrame);
  const jsonToPeer = bySide("peer", jsonFrame);

  const frames = new FrameReader(); // one reader per connection, as in the transport
  const harness = new MessageReader("harness");
  const peer = new MessageReader("peer");
  for (const r of [...harness.push(cborToHarness), ...peer.push(cborToPeer)]) if (!r.ok) throw r.error;
  const scratch: unknown[] = [];
  const jsonValidated = (chunk: Buffer, side: Side): void => {
    for (const v of parseJsonFrames(chunk, scratch)) if (!parseMessage(v, side).ok) throw new Error("rejected");
  };

  const rounds = 15;
  const m = medianOpsPerSecond({
    encode: () => {
      for (const v of values) encodeFrame(v);
    },
    jsonEncode: () => {
      for (const v of values) jsonFrame(v);
    },
    decode: () => {
      frames.push(cbor);
    },
    jsonDecode: () => {
      parseJsonFrames(json, scratch);
    },
    jsonParseStrings: () => {
      for (const s of jsonStrings) JSON.parse(s);
    },
    validated: () => {
      harness.push(cborToHarness);
      peer.push(cborToPeer);
    },
    jsonValidated: () => {
      jsonValidated(jsonToHarness, "harness");
      jsonValidated(jsonToPeer, "peer");
    },
  }, rounds, 100);
  const line = (what: string, ours: string, base: string, baseline: string): void => {
    const a = m[ours]!;
    const b = m[base]!;
    console.log(
      `${what}: ${fmt(a.median, 0)} ops/s (${fmt(a.min, 0)}–${fmt(a.max, 0)}) | ${baseline}: ${fmt(b.median, 0)} ops/s (${fmt(b.min, 0)}–${fmt(b.max, 0)}) | ratio ${fmt(a.median / b.median, 2)}x`,
    );
  };
  console.log(`one op = 4 messages (hello, deliver, 2 × emit); medians of ${rounds} interleaved rounds (lowest–highest)`);
  line("encode: values → CBOR frames", "encode", "jsonEncode", "JSON.stringify → length-prefixed UTF-8 frames");
  line("decode: CBOR frames in one Buffer → values (FrameReader)", "decode", "jsonDecode", "length-prefixed JSON frames in one Buffer → UTF-8 decode → JSON.parse");
  line("decode: CBOR frames → values (FrameReader)", "decode", "jsonParseStrings", "JSON.parse of ready-made strings (no framing, no UTF-8 decode)");
  line("decode + validate: CBOR frames → accepted messages (MessageReader)", "validated", "jsonValidated", "JSON frames → JSON.parse → the same parseMessage validation");
  line("decode + validate: CBOR frames → accepted messages (MessageReader)", "validated", "jsonDecode", "JSON frames → JSON.parse, no validation");
  console.log(`(bytes per op: ${cbor.length} CBOR frames vs ${json.length} JSON frames)`);
}
