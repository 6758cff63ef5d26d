// What every bus-connected peer (attached UI or extension) shares: its connection as a subscriber
// sink, and interception questions and replies carried over its connection.
import type { InterceptMessage, InterceptReplyMessage } from "../../generated/index.js";
import type { Connection } from "../transport/index.js";
import type { Bus, Delivery, Sink } from "../bus/index.js";

/** Bytes of replay a connection holds queued before the next batch is read from the journals. */
export const REPLAY_QUEUED_BYTES = 1024 * 1024;

/** A connection's bounded outbound queue is its subscriber queue: when it is full, it is cut off. */
export function connectionSink(conn: Connection): Sink {
  return {
    // The bus encodes each delivery once; every subscriber's connection queues the same frame.
    offer: (_d: Delivery, frame: Buffer) => (conn.sendFrame(frame) === "queued" ? "queued" : "full"),
    // A replay keeps little queued at a time: the peer's pace, not the queue's bound, sets its memory.
    offerBatchAsync: async (_d: readonly Delivery[], frames: readonly Buffer[]) =>
      (await conn.whenBelow(REPLAY_QUEUED_BYTES)) && (await conn.sendFramesAsync(frames)) === "queued" ? "queued" : "closed",
    backlog: () => conn.stats().items,
    close: (reason) => conn.close(reason),
  };
}

/**
 * Registers a peer's interceptor: questions go out as `intercept_request` frames. A question that
 * cannot be queued (the peer stopped reading) counts as a pass at once.
 */
export function addPeerInterceptor(bus: Bus, generation: number, conn: Connection, request: InterceptMessage["payload"]): void {
  bus.addInterceptor(generation, {
    selectors: request.selectors,
    priority: request.priority,
    intercept: (id, event, publisher) =>
      conn.send({ message: "intercept_request", payload: { id, event: { name: event.name, data: event.data }, publisher: { ...publisher } } }) === "queued",
  });
}

/** Hands a peer's reply to the bus; a `replace` without a replacement counts as a pass. */
export function replyFromPeer(bus: Bus, generation: number, reply: InterceptReplyMessage["payload"]): void {
  const action =
    reply.action === "replace"
      ? reply.replacement
        ? { action: "replace" as const, replacement: reply.replacement }
        : { action: "pass" as const }
      : { action: reply.action };
  bus.reply(generation, reply.id, action);
}
