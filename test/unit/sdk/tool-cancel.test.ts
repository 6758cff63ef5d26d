// The extension SDK's tool calls and their cancellation: a call reaches its owner as a directed
// tool.call, and its cancel after it on the same connection (SPEC-tool-routing); a committed
// tool.started delivery starts nothing.
import { describe, expect, it } from "vitest";
import { PassThrough } from "node:stream";
import { Extension } from "../../../handwritten/sdk/index.js";
import { MessageReader, REVISION, encodeFrame } from "../../../handwritten/protocol/index.js";
import type { WireMessage } from "../../../generated/index.js";
import { waitFor } from "../../support/wait.js";

async function connected(): Promise<{ ext: Extension; send: (m: unknown) => void; emitted: () => Array<{ name: string; data: Record<string, unknown> }> }> {
  const toExtension = new PassThrough();
  const fromExtension = new PassThrough();
  const reader = new MessageReader("harness");
  const got: WireMessage[] = [];
  fromExtension.on("data", (chunk: Buffer) => {
    for (const r of reader.push(chunk)) if (r.ok) got.push(r.message);
  });
  const connecting = Extension.connect({ input: toExtension, output: fromExtension });
  await waitFor(() => got.length > 0, "the extension's hello");
  const send = (m: unknown) => toExtension.write(encodeFrame(m as WireMessage));
  send({ message: "configure", payload: { revision: { ...REVISION }, instance: "x", kind: "tool", tool_prefix: "", state_dir: "/tmp", session_id: "s-1", config: {}, secrets: {} } });
  const ext = await connecting;
  const emitted = () => got.flatMap((m) => (m.message === "emit" ? [{ name: m.payload.event.name, data: m.payload.event.data as Record<string, unknown> }] : []));
  return { ext, send, emitted };
}

const call = (callId: string) => ({ message: "direct", payload: { event: { name: "tool.call", data: { agent_id: "a-1", call_id: callId, tool: "wait", arguments_json: "{}" } } } });
const started = (callId: string) => ({
  message: "deliver",
  payload: { event: { name: "tool.started", data: { agent_id: "a-1", call_id: callId, tool: "wait", owner: "x", arguments_json: "{}" } }, seq: 1, recorded_at: 1, publisher: { class: "harness" } },
});
const cancel = (callId: string) => ({ message: "direct", payload: { event: { name: "tool.cancel_request", data: { agent_id: "a-1", call_id: callId } } } });
const ENDS = new Set(["tool.result_reported", "tool.error_reported", "tool.cancelled_reported"]);

describe("extension SDK tool calls", () => {
  it("[sdk.tool.call-directed] runs a call on its directed tool.call and aborts it on the cancel that follows; a tool.started delivery or a cancel of no running call does nothing", async () => {
    const { ext, send, emitted } = await connected();
    const ran: string[] = [];
    ext.registerTool({
      name: "wait",
      description: "waits until cancelled",
      parameters: { type: "object" },
      run: (_args, ctx) => {
        ran.push(ctx.callId);
        return new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve({ output: "stopped" }), { once: true }));
      },
    });
    ext.ready();
    // A committed tool.started is for UIs and the journal: delivered to an extension, it starts nothing.
    send(started("c-seen"));
    // A cancel of a call this extension is not running (it ended, or never came) is ignored.
    send(cancel("c-gone"));
    send(call("c-1"));
    await waitFor(() => ran.includes("c-1"), "the call to run");
    send(cancel("c-1"));
    await waitFor(() => emitted().some((e) => e.name === "tool.cancelled_reported" && e.data.call_id === "c-1"), "the cancelled call's end");
    expect(ran).toEqual(["c-1"]);
    expect(emitted().filter((e) => ENDS.has(e.name)).map((e) => `${e.name} ${String(e.data.call_id)}`)).toEqual(["tool.cancelled_reported c-1"]);
    ext.conn.destroy();
  });
});
