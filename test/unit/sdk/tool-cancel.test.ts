// The extension SDK's tool calls and their cancellation: a directed tool.cancel_request can overtake
// the committed tool.started delivery it refers to; the call then ends cancelled as it arrives,
// never running to its end.
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

const started = (callId: string) => ({
  message: "deliver",
  payload: { event: { name: "tool.started", data: { agent_id: "a-1", call_id: callId, tool: "wait", owner: "x", arguments_json: "{}" } }, seq: 1, recorded_at: 1, publisher: { class: "harness" } },
});
const cancel = (callId: string) => ({ message: "direct", payload: { event: { name: "tool.cancel_request", data: { agent_id: "a-1", call_id: callId } } } });

describe("extension SDK tool calls", () => {
  it("[sdk.tool.cancel-before-start] a cancel that overtakes its call's start ends the call cancelled without running it; one after the start aborts the run", async () => {
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
    send(cancel("c-early"));
    send(started("c-early"));
    await waitFor(() => emitted().some((e) => e.name === "tool.cancelled_reported" && e.data.call_id === "c-early"), "the early-cancelled call's end");
    expect(ran).toEqual([]);
    // The ordinary order: the run starts, and the cancel aborts it.
    send(started("c-late"));
    await waitFor(() => ran.includes("c-late"), "the call to run");
    send(cancel("c-late"));
    await waitFor(() => emitted().some((e) => e.name === "tool.cancelled_reported" && e.data.call_id === "c-late"), "the running call's end");
    const ends = new Set(["tool.result_reported", "tool.error_reported", "tool.cancelled_reported"]);
    expect(emitted().filter((e) => ends.has(e.name)).map((e) => `${e.name} ${String(e.data.call_id)}`)).toEqual([
      "tool.cancelled_reported c-early",
      "tool.cancelled_reported c-late",
    ]);
    ext.conn.destroy();
  });
});
