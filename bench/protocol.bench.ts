// Wire codec throughput beside a JSON stringify/parse baseline on the same messages, same run.
import { FrameReader, MessageReader, encodeFrame } from "../handwritten/protocol/index.js";
import { fmt, opsPerSecond, report } from "./support.js";

const text = "The quick brown fox jumps over the lazy dog. ".repeat(5);
const MESSAGES: unknown[] = [
  { message: "hello", payload: { revision: { major: 1, minor: 0 }, role: "ui", session_id: "s-01J9Z3" } },
  {
    message: "deliver",
    payload: {
      event: { name: "provider.response_updated", data: { agent_id: "a-1", prompt_id: "p-7", round: 2, text_delta: text, reasoning_delta: "" } },
      seq: 1234,
      recorded_at: 1_780_000_000_000_000,
      publisher: { class: "harness" },
    },
  },
  {
    message: "emit",
    payload: { event: { name: "tool.result_reported", data: { call_id: "c-42", output: "x".repeat(4096) } } },
  },
  {
    message: "emit",
    payload: {
      event: {
        name: "agent.stats_updated",
        data: { agent_id: "a-1", usage: { input_tokens: 12000, output_tokens: 800 }, cost_usd: 0.0123, context_tokens: 12800 },
      },
    },
  },
];

export async function run(): Promise<void> {
  const frames = MESSAGES.map((m) => encodeFrame(m));
  const stream = Buffer.concat(frames);
  const jsons = MESSAGES.map((m) => JSON.stringify(m));
  const bytes = stream.length;

  const encode = opsPerSecond(() => {
    for (const m of MESSAGES) encodeFrame(m);
  });
  const jsonEncode = opsPerSecond(() => {
    for (const m of MESSAGES) Buffer.from(JSON.stringify(m));
  });
  report("wire encode (4 msgs/op)", `${fmt(encode, 0)} ops/s`, "JSON.stringify", `${fmt(jsonEncode, 0)} ops/s`, encode / jsonEncode);

  // One reader per connection, as in the transport: each op feeds it a chunk of four whole frames.
  const reader = new FrameReader();
  const decode = opsPerSecond(() => {
    reader.push(stream);
  });
  const jsonBytes = jsons.map((j) => Buffer.from(j));
  const jsonDecode = opsPerSecond(() => {
    for (const b of jsonBytes) JSON.parse(b.toString("utf8"));
  });
  const jsonParseOnly = opsPerSecond(() => {
    for (const j of jsons) JSON.parse(j);
  });
  report("wire decode (4 msgs/op)", `${fmt(decode, 0)} ops/s`, "JSON bytes→parse", `${fmt(jsonDecode, 0)} ops/s`, decode / jsonDecode);
  report("wire decode (4 msgs/op)", `${fmt(decode, 0)} ops/s`, "JSON.parse of strings", `${fmt(jsonParseOnly, 0)} ops/s`, decode / jsonParseOnly);

  const messages = new MessageReader("harness");
  const validated = opsPerSecond(() => {
    messages.push(stream);
  });
  report("wire decode + validate", `${fmt(validated, 0)} ops/s`, "JSON bytes→parse", `${fmt(jsonDecode, 0)} ops/s`, validated / jsonDecode);
  console.log(`(frames: ${bytes} bytes CBOR vs ${jsons.reduce((n, j) => n + Buffer.byteLength(j), 0)} bytes JSON per op)`);
}
