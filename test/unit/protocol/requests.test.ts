// Typed requests (SPEC-wire-protocol, "Requests") over real unix sockets in this process: the
// asking side's request()/notify() and the answering side's RequestServer and answerEvent.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REQUESTS, type WireMessage } from "../../../generated/index.js";
import { RequestError, RequestRefusal, RequestServer, answerEvent, notify, refusal, request, type RequestChannel } from "../../../handwritten/protocol/index.js";
import { connectUnix, listenUnix, mintInstance, type Connection, type UnixServer } from "../../../handwritten/transport/index.js";
import { cleanupAll, tempHome } from "../../fixtures/transport/helpers.js";
import { waitFor } from "../../support/wait.js";

const servers: UnixServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  cleanupAll();
});

/** A connected pair over a real socket: the daemon's end (reads to_harness) and the peer's. */
async function pair(): Promise<{ daemon: Connection; peer: Connection }> {
  let daemon: Connection | undefined;
  const server = await listenUnix(join(tempHome(), "runtime", `${4100 + servers.length}-${mintInstance()}.sock`), { onConnection: (c) => (daemon = c) });
  servers.push(server);
  const peer = await connectUnix(server.path, { timeoutMs: 5000 });
  await waitFor(() => daemon !== undefined, "the daemon end of the connection");
  return { daemon: daemon as Connection, peer };
}

/** The peer's connection, counting the listeners a request leaves behind. */
function counted(conn: Connection): RequestChannel & { listeners(): number } {
  let live = 0;
  const track = (off: () => void) => {
    live++;
    let done = false;
    return () => {
      if (!done) live--;
      done = true;
      off();
    };
  };
  return {
    send: (m) => conn.send(m),
    onMessage: (l) => track(conn.onMessage(l)),
    onClose: (l) => track(conn.onClose(l)),
    listeners: () => live,
  };
}

function received(conn: Connection): WireMessage[] {
  const seen: WireMessage[] = [];
  conn.onMessage((m) => seen.push(m));
  return seen;
}

describe("request()", () => {
  it("[requests.client.settles-once] mints an id, matches only the answer that carries it, and leaves no listener behind", async () => {
    const { daemon, peer } = await pair();
    const asked = received(daemon);
    daemon.onMessage((m) => {
      if (m.message !== "ui_roster_request") return;
      // Decoys first: another request's answer, another request's refusal, an unrelated notice.
      daemon.send({ message: "ui_roster_result", payload: { request_id: "someone-else", rows: [], total: 99 } });
      daemon.send({ message: "error", payload: { code: "invalid", request_id: "someone-else" } });
      daemon.send({ message: "notice", payload: { level: "info", text: "hi" } });
      daemon.send({ message: "ui_roster_result", payload: { request_id: m.payload.request_id, rows: [], total: 3 } });
    });
    const channel = counted(peer);
    const page = await request(channel, REQUESTS.ui_roster_request, { include_unloaded: true });
    expect(page).toEqual({ rows: [], total: 3 });
    expect(channel.listeners()).toBe(0);
    const sent = asked.find((m) => m.message === "ui_roster_request");
    expect(sent?.payload).toMatchObject({ include_unloaded: true, request_id: expect.stringMatching(new RegExp(`^r-${process.pid}-\\d+$`)) });
    peer.destroy();
  });

  it("[requests.client.settles-once] a refusal carrying the id is a RequestError with the code; on a channel of its own, so is one carrying none", async () => {
    const { daemon, peer } = await pair();
    daemon.onMessage((m) => {
      if (m.message === "ui_history_request") daemon.send({ message: "error", payload: { code: "invalid", request_id: m.payload.request_id } });
      if (m.message === "session_current_request") daemon.send({ message: "error", payload: { code: "revision_mismatch" } });
    });
    const refused = await request(peer, REQUESTS.ui_history_request, { agent_id: "a-1", limit: 5 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RequestError);
    expect(refused).toMatchObject({ request: "ui_history_request", failure: "refused", refusal: "invalid" });
    const sole = await request(peer, REQUESTS.session_current_request, {}, { soleRequest: true }).catch((e: unknown) => e);
    expect(sole).toMatchObject({ failure: "refused", refusal: "revision_mismatch" });
    peer.destroy();
  });

  it("[requests.client.settles-once] ends closed, timed out or aborted, each exactly once, and cleans up", async () => {
    const { daemon, peer } = await pair();
    const channel = counted(peer);
    const timedOut = request(channel, REQUESTS.ui_roster_request, { include_unloaded: false }, { timeoutMs: 20 }).catch((e: unknown) => e);
    expect(await timedOut).toMatchObject({ failure: "timeout" });
    const controller = new AbortController();
    const aborted = request(channel, REQUESTS.ui_roster_request, { include_unloaded: false }, { signal: controller.signal }).catch((e: unknown) => e);
    controller.abort();
    expect(await aborted).toMatchObject({ failure: "aborted" });
    const early = new AbortController();
    early.abort();
    expect(await request(channel, REQUESTS.ui_roster_request, { include_unloaded: false }, { signal: early.signal }).catch((e: unknown) => e)).toMatchObject({ failure: "aborted" });
    const closed = request(channel, REQUESTS.ui_roster_request, { include_unloaded: false }).catch((e: unknown) => e);
    daemon.destroy();
    expect(await closed).toMatchObject({ failure: "closed" });
    expect(channel.listeners()).toBe(0);
    // A request on a connection that has ended is never sent.
    expect(await request(peer, REQUESTS.ui_roster_request, { include_unloaded: false }).catch((e: unknown) => e)).toMatchObject({ failure: "closed" });
  });

  it("[requests.client.settles-once] an event request: its directed answer, a refusal's reason, an answer without its success fields refused", async () => {
    const { daemon, peer } = await pair();
    let n = 0;
    daemon.onMessage((m) => {
      if (m.message !== "emit" || m.payload.event.name !== "ui.create_agent") return;
      const request_id = String(m.payload.event.data.request_id);
      const answers = [
        { request_id, ok: true, agent_id: "a-new" },
        { request_id, ok: false, error: "unknown parent agent" },
        { request_id, ok: true },
      ];
      daemon.send({ message: "direct", payload: { event: { name: "ui.create_agent_result", data: answers[n++] as Record<string, unknown> } } });
    });
    expect(await request(peer, REQUESTS["ui.create_agent"], {})).toEqual({ agent_id: "a-new" });
    const refused = await request(peer, REQUESTS["ui.create_agent"], { parent_id: "a-gone" }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ failure: "refused", refusal: "unknown parent agent", message: "unknown parent agent" });
    expect(await request(peer, REQUESTS["ui.create_agent"], {}).catch((e: unknown) => e)).toMatchObject({ failure: "refused", refusal: "the answer carries no agent_id" });
    peer.destroy();
  });
});

describe("RequestServer", () => {
  it("[requests.server.one-answer] answers a declared request once; refuses a caller it does not name, a bad payload, a declared refusal and a failing handler", async () => {
    const { daemon, peer } = await pair();
    const logged: string[] = [];
    let detached = 0;
    const server = new RequestServer<{ who: string }>({ refuseUnauthorized: true, log: (l) => logged.push(l) })
      .serve(REQUESTS.ui_roster_request, (p, ctx) => ({ rows: [], total: p.include_unloaded ? 2 : 1, ...(ctx.who === "x" ? {} : {}) }))
      .serve(REQUESTS.ui_history_request, () => {
        throw refusal(REQUESTS.ui_history_request, "invalid");
      })
      .serve(REQUESTS.ui_tree_request, async () => {
        throw new Error("a secret detail");
      })
      .serve(REQUESTS.ui_detach_request, () => void detached++);
    expect(server.names()).toEqual(["ui_detach_request", "ui_history_request", "ui_roster_request", "ui_tree_request"]);
    daemon.onMessage((m) => {
      const caller = (m.payload as { request_id?: string }).request_id === "as-client" ? "client" : "ui";
      if (!server.handle(daemon, caller, m, { who: "x" })) daemon.send({ message: "error", payload: { code: "unknown_message" } });
    });
    const answers = received(peer);
    expect(await request(peer, REQUESTS.ui_roster_request, { include_unloaded: true })).toEqual({ rows: [], total: 2 });
    expect(await request(peer, REQUESTS.ui_history_request, { agent_id: "a", limit: 1 }).catch((e: unknown) => e)).toMatchObject({ failure: "refused", refusal: "invalid" });
    expect(await request(peer, REQUESTS.ui_tree_request, {}).catch((e: unknown) => e)).toMatchObject({ failure: "refused", refusal: "invalid" });
    expect(logged).toEqual(["ui_tree_request: its handler failed (Error); answered invalid"]);
    // A payload its schema refuses (the reader checks every frame first; the server checks again).
    expect(server.handle(daemon, "ui", { message: "ui_roster_request", payload: { request_id: "r-bad", include_unloaded: true, bogus: 1 } } as never, { who: "x" })).toBe(true);
    await waitFor(() => answers.some((m) => m.message === "error" && m.payload.request_id === "r-bad" && m.payload.code === "invalid"), "the bad payload's refusal");
    // A caller the declaration does not name: refused with its own id, the handler never runs.
    expect(await request(peer, REQUESTS.ui_roster_request, { include_unloaded: false }, { requestId: "as-client" }).catch((e: unknown) => e)).toMatchObject({ failure: "refused", refusal: "unauthorized" });
    // A notification runs its handler and is never answered; a message no one serves is not taken.
    notify(peer, REQUESTS.ui_detach_request, {});
    peer.send({ message: "ui_session_end_request", payload: {} });
    await waitFor(() => answers.some((m) => m.message === "error" && m.payload.code === "unknown_message"), "the untaken message's answer");
    expect(detached).toBe(1);
    const count = (id: string) => answers.filter((m) => (m.payload as { request_id?: string }).request_id === id).length;
    for (const m of answers) if (m.message === "ui_roster_result" || m.message === "error") expect(count((m.payload as { request_id?: string }).request_id ?? "")).toBeLessThanOrEqual(1);
    peer.destroy();
  });

  it("[requests.server.one-answer] an extension's server refuses nothing aloud", async () => {
    const { daemon, peer } = await pair();
    const server = new RequestServer<undefined>({ refuseUnauthorized: false }).serve(REQUESTS.ui_roster_request, () => ({ rows: [], total: 0 }));
    const taken: boolean[] = [];
    daemon.onMessage((m) => taken.push(server.handle(daemon, "extension", m, undefined)));
    const answers = received(peer);
    peer.send({ message: "ui_roster_request", payload: { request_id: "r-1", include_unloaded: false } });
    await waitFor(() => taken.length === 1, "the request taken");
    expect(taken).toEqual([true]);
    // The connection stays quiet: a roster asked again by a UI is answered, and only that.
    const ui = new RequestServer<undefined>({ refuseUnauthorized: true }).serve(REQUESTS.ui_roster_request, () => ({ rows: [], total: 5 }));
    daemon.onMessage((m) => ui.handle(daemon, "ui", m, undefined));
    expect(await request(peer, REQUESTS.ui_roster_request, { include_unloaded: false })).toEqual({ rows: [], total: 5 });
    expect(answers.map((m) => m.message)).toEqual(["ui_roster_result"]);
    peer.destroy();
  });
});

describe("answerEvent", () => {
  const payload = { request_id: "r-9", agent_id: "a-1", name: "greet" };
  const answer = async (handler: () => unknown, data: Record<string, unknown> = payload) => {
    const sent: Array<[string, Record<string, unknown>]> = [];
    await answerEvent("ui.skill_load", data as never, handler as never, (name, d) => sent.push([name, d]));
    return sent;
  };

  it("[requests.event.one-answer] a result, a declared refusal and a thrown error each become exactly one answer under the request's id", async () => {
    expect(await answer(() => ({ prompt_id: "p-1" }))).toEqual([["ui.skill_load_result", { request_id: "r-9", ok: true, prompt_id: "p-1" }]]);
    expect(await answer(() => Promise.reject(new RequestRefusal<"ui.skill_load">('unknown skill "x"')))).toEqual([["ui.skill_load_result", { request_id: "r-9", ok: false, error: 'unknown skill "x"' }]]);
    // A thrown error's message, on one line and fitted to the field (ShortText: 1,024 characters).
    const [[, long]] = (await answer(() => {
      throw new Error(`first\nsecond\u001b[2J${"x".repeat(2000)}`);
    })) as [[string, { error: string }]];
    expect(long.error.startsWith("first second [2J")).toBe(true);
    expect(long.error).toHaveLength(1024);
    // A request its schema refuses never reaches the handler.
    let ran = false;
    expect(
      await answer(
        () => {
          ran = true;
          return { prompt_id: "p-2" };
        },
        { request_id: "r-9", agent_id: "a-1", name: "greet", bogus: 1 },
      ),
    ).toEqual([["ui.skill_load_result", { request_id: "r-9", ok: false, error: "the request does not match its schema" }]]);
    expect(ran).toBe(false);
  });
});
