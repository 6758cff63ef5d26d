// The daemon answers every request spec/ declares for a socket peer, each through its one handler
// (SPEC-daemon-peers; SPEC-wire-protocol, "Requests").
import { afterEach, describe, expect, it } from "vitest";
import { REQUESTS, type RequestCaller } from "../../../generated/index.js";
import { socketRequests } from "../../../handwritten/harness/socket-requests.js";
import { HarnessKit } from "../../support/harness-kit.js";

const kits: HarnessKit[] = [];
afterEach(async () => {
  while (kits.length) await kits.pop()?.close();
});

const SOCKET_CALLERS: readonly RequestCaller[] = ["ui", "client", "peer"];

describe("the daemon's socket requests", () => {
  it("[requests.daemon.all-served] serves exactly the wire requests declared for socket peers", async () => {
    const k = await HarnessKit.open({ durable: false });
    kits.push(k);
    const served = socketRequests(k.h, { sessionInfo: () => ({ session_id: k.h.sessionId, project_root: k.h.projectRoot, pid: process.pid }) }).names();
    const declared = Object.values(REQUESTS)
      .filter((r) => r.via === "message" && (r.callers as readonly RequestCaller[]).some((c) => SOCKET_CALLERS.includes(c)))
      .map((r) => r.name)
      .sort();
    expect(served).toEqual(declared);
    // Every other wire request is an extension's, answered by the supervisor: its notices and its colon commands.
    expect(Object.values(REQUESTS).filter((r) => r.via === "message" && !declared.includes(r.name)).map((r) => r.name).sort()).toEqual(["extension_command_declare", "extension_command_result", "extension_notice_request"]);
  });
});
