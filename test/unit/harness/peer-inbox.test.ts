// The peer inbox's answer when recording a message fails (SPEC-peer-messaging): a refusal the
// sender can retry, never an unhandled rejection that would take the daemon down.
import { describe, expect, it } from "vitest";
import { PeerInbox, type PeerInboxPort } from "../../../handwritten/harness/peer-messaging.js";

function inbox(publish: PeerInboxPort["publish"]): PeerInbox {
  return new PeerInbox({ sessionId: "s-here", addressable: () => true, publish, agents: () => [] });
}

const request = { request_id: "pm-1", from_session: "s-there", from_agent: "a-sender", to_agent: "a-target", text: "hello" };

describe("the peer inbox", () => {
  it("[peer-messaging.record-failure-refused] a message whose recording throws is refused, and a resend is tried again", async () => {
    let calls = 0;
    const failing = inbox(async () => {
      calls++;
      if (calls === 1) throw new Error("the bus is closed");
      return true;
    });
    await expect(failing.receive(request)).resolves.toEqual({ status: "refused", reason: "the message could not be recorded" });
    // Not remembered as seen: the sender's retry records it.
    await expect(failing.receive(request)).resolves.toEqual({ status: "accepted" });
    await expect(failing.receive(request)).resolves.toEqual({ status: "duplicate" });
    expect(calls).toBe(2);
  });
});
