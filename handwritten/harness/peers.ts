// What the harness needs from a connected peer: identity stamped at admission and a way to send it
// directed messages. The transport layer supplies real connections.
import type { WireMessage } from "../../generated/index.js";
import type { PublisherEnvelope } from "../bus/index.js";
import type { SendAsyncResult, SendResult } from "../transport/index.js";

export interface Peer {
  /** Connection generation: unique per connection or extension process within this daemon. */
  readonly generation: number;
  readonly publisher: PublisherEnvelope;
  /** Queues a message now, or says why it could not (its queue is full, it is gone, it is too large). */
  send(message: WireMessage): SendResult;
  /** Queues a message once there is room (in order with other waiting sends), or says why it could not. */
  sendAsync(message: WireMessage): Promise<SendAsyncResult>;
}
