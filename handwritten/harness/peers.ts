// What the harness needs from a connected peer: identity stamped at admission and a way to send it
// directed messages. The transport layer supplies real connections.
import type { WireMessage } from "../../generated/index.js";
import type { PublisherEnvelope } from "../bus/index.js";

export interface Peer {
  /** Connection generation: unique per connection or extension process within this daemon. */
  readonly generation: number;
  readonly publisher: PublisherEnvelope;
  send(message: WireMessage): void;
}
