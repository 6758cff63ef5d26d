// Tau Swarm 0.2.0 framing (SPEC-swarm, "Wire"): a 4-byte big-endian length, then that many bytes of
// UTF-8 JSON, each frame checked against spec/swarm.tsp before anything acts on it. The length is
// checked before the body is gathered, so a peer cannot make either side allocate past the cap.
import { validateSwarmFrame, type SwarmFrame } from "../../generated/index.js";
import type { IrohRecvStream, IrohSendStream } from "./iroh.js";

/** The largest frame either side accepts or sends. */
export const SWARM_MAX_FRAME_BYTES = 2 * 1024 * 1024;

/** The ALPN both sides speak; another one is never accepted. */
export const SWARM_ALPN = Array.from(Buffer.from("tau-swarm/0.2", "utf8"));

export const SWARM_VERSION = "0.2.0";

/** Most bytes asked of the stream at once. */
const READ_CHUNK = 64 * 1024;

export class SwarmFrameError extends Error {
  override name = "SwarmFrameError";
}

/** A frame that was read whole but does not hold to the schema: what it said, for a refusal naming its command. */
export class SwarmInvalidFrame extends SwarmFrameError {
  constructor(
    message: string,
    readonly value: unknown,
  ) {
    super(message);
  }
}

export function encodeFrame(frame: SwarmFrame): Buffer {
  const body = Buffer.from(JSON.stringify(frame), "utf8");
  if (body.length > SWARM_MAX_FRAME_BYTES) throw new SwarmFrameError(`a ${frame.type} frame of ${body.length} bytes is over the ${SWARM_MAX_FRAME_BYTES}-byte cap`);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
}

export async function writeFrame(send: IrohSendStream, frame: SwarmFrame): Promise<void> {
  await send.writeAll(Array.from(encodeFrame(frame)));
}

/** Checks one decoded frame; a SwarmInvalidFrame says which field is wrong. */
export function checkFrame(value: unknown): SwarmFrame {
  if (validateSwarmFrame(value)) return value as SwarmFrame;
  // Each branch of the union reports its first error: a field's error is the one of the branch whose `type` matched.
  const e = validateSwarmFrame.errors?.find((x) => x.instancePath !== "" && x.instancePath !== "/type");
  const where = (e?.instancePath ?? "").split("/").filter(Boolean).join(".");
  const type = typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string" ? String((value as { type: string }).type).slice(0, 32) : "?";
  throw new SwarmInvalidFrame(`a ${JSON.stringify(type)} frame does not hold to Tau Swarm 0.2.0${e === undefined ? "" : ` at ${where}: ${e.message ?? "invalid"}`}`, value);
}

/** Reads frames off one stream, in order; undefined at the stream's clean end. */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);
  private ended = false;

  constructor(private readonly recv: IrohRecvStream) {}

  async next(): Promise<SwarmFrame | undefined> {
    if (!(await this.fill(4))) return undefined;
    const length = this.buffered.readUInt32BE(0);
    if (length > SWARM_MAX_FRAME_BYTES) throw new SwarmFrameError(`a frame of ${length} bytes is over the ${SWARM_MAX_FRAME_BYTES}-byte cap`);
    if (!(await this.fill(4 + length))) throw new SwarmFrameError("the stream ended inside a frame");
    const body = this.buffered.subarray(4, 4 + length);
    this.buffered = this.buffered.subarray(4 + length);
    let value: unknown;
    try {
      value = JSON.parse(body.toString("utf8"));
    } catch {
      throw new SwarmFrameError("a frame is not JSON");
    }
    return checkFrame(value);
  }

  /** Reads until `bytes` are buffered; false when the stream ended first (cleanly only when nothing is buffered). */
  private async fill(bytes: number): Promise<boolean> {
    while (this.buffered.length < bytes) {
      if (this.ended) {
        if (this.buffered.length === 0) return false;
        throw new SwarmFrameError("the stream ended inside a frame");
      }
      const chunk = await this.readChunk(Math.min(READ_CHUNK, bytes - this.buffered.length));
      if (chunk === undefined) this.ended = true;
      else this.buffered = Buffer.concat([this.buffered, Buffer.from(chunk)]);
    }
    return true;
  }

  private async readChunk(limit: number): Promise<number[] | undefined> {
    const chunk = await this.recv.read(limit);
    return chunk.length === 0 ? undefined : chunk;
  }
}
