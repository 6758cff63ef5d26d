// Authority before schema (SPEC-event-publication, "Admission"), against a real daemon, for every
// class of publisher that reaches it over a connection: an attached UI, another socket client and a
// peer daemon on the socket, and a configured extension over stdio, live and before its activation.
// An event the publisher may not publish is answered `unauthorized` whatever its data — data its
// schema refuses, data it takes, or an event that does not exist — so the answers say nothing of a
// schema; only an event the publisher may publish has its data checked (`invalid`).
import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { REVISION } from "../../../handwritten/protocol/index.js";
import { TestClient, startDaemonWithExtensions, waitFor, type StartedDaemon } from "../../support/daemon.js";
import { REPO_ROOT } from "../../support/paths.js";

const HOSTILE = join(REPO_ROOT, "test/fixtures/hostile/hostile_extension.py");
const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()?.();
});

/** Only the harness may publish it: a forged prompt. */
const FORBIDDEN = "agent.prompt_submitted";
const FORBIDDEN_BAD_DATA = { agent_id: 7, text: ["not", "text"] };
const FORBIDDEN_GOOD_DATA = { agent_id: "a-1", prompt_id: "p-1", source: "human_ui", mode: "queue", text: "forged" };

/** Every error answer a connection has received so far, in order, whole. */
function errors(c: TestClient): unknown[] {
  return c.inbox.filter((m) => m.message === "error").map((m) => m.payload);
}

async function emitAll(c: TestClient, emits: Array<[string, Record<string, unknown>]>): Promise<unknown[]> {
  const before = errors(c).length;
  for (const [name, data] of emits) c.emit(name, data);
  await waitFor(() => errors(c).length >= before + emits.length, "an answer to each emit");
  return errors(c).slice(before);
}

const FORBIDDEN_EMITS: Array<[string, Record<string, unknown>]> = [
  [FORBIDDEN, FORBIDDEN_BAD_DATA],
  [FORBIDDEN, FORBIDDEN_GOOD_DATA],
  ["nosuch.event", { x: 1 }],
];
const UNAUTHORIZED = { code: "unauthorized" };

describe("authority is judged before the schema", () => {
  let d: StartedDaemon;

  it("[bus.admission.authority-before-schema] socket peers: an attached UI, another client and a peer daemon are told `unauthorized` for what they may not publish, whatever its data", async () => {
    d = await startDaemonWithExtensions([], cleanups);
    const ui = await TestClient.ui(d.socket);
    const watcher = await TestClient.ui(d.socket);
    watcher.send({ message: "subscribe", payload: { historical: [], live: ["*"] } });
    await watcher.sync();
    cleanups.push(() => [ui, watcher].forEach((c) => c.close()));

    // A UI may publish ui.focus: only there does it learn its data was wrong.
    expect(await emitAll(ui, [...FORBIDDEN_EMITS, ["ui.focus", { focused: "yes" }]])).toEqual([UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED, { code: "invalid" }]);

    const client = await TestClient.client(d.socket);
    cleanups.push(() => client.close());
    expect(await emitAll(client, [...FORBIDDEN_EMITS, ["ui.focus", { focused: "yes" }]])).toEqual([UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED]);

    const peer = await TestClient.connect(d.socket);
    cleanups.push(() => peer.close());
    peer.send({ message: "hello", payload: { revision: { ...REVISION }, role: "peer" } });
    expect(await emitAll(peer, [...FORBIDDEN_EMITS, ["ui.focus", { focused: "yes" }]])).toEqual([UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED, UNAUTHORIZED]);

    // Nothing forged was committed.
    await watcher.sync();
    expect(watcher.deliveries().filter((x) => x.name === FORBIDDEN)).toEqual([]);
  });

  it("[bus.admission.authority-before-schema] an extension over stdio, live and before its activation (staged), is told `unauthorized` for what its kind may not publish, whatever its data", async () => {
    const hostile = (name: string, config: Record<string, unknown>) => ({ name, command: ["python3", HOSTILE], config, startup_timeout_seconds: 20 });
    d = await startDaemonWithExtensions([hostile("live", { tools: ["liveecho"] }), hostile("early", { tools: ["earlyecho"], pre_ready_forbidden: true })], cleanups);
    const ui = await TestClient.ui(d.socket);
    cleanups.push(() => ui.close());
    ui.send({ message: "subscribe", payload: { historical: ["tool.register", "harness.notice"], live: ["*"] } });
    await waitFor(() => ui.deliveries().filter((x) => x.name === "tool.register").length === 2, "both tools to register", 30_000);

    const act = (name: string, payload: Record<string, unknown> = {}) => ui.emit("extension.event", { category: "hostile", name, payload });
    act("forbidden", { instance: "live" }); // "early" sent its own before it was ready
    act("report", { after: 4 }); // each extension reports the codes it was answered with, once it has four
    await waitFor(() => ui.deliveries().filter((x) => x.name === "extension.event" && x.data.category === "hostile-report").length === 2, "both reports", 20_000);
    const reports = Object.fromEntries(
      ui
        .deliveries()
        .filter((x) => x.name === "extension.event" && x.data.category === "hostile-report")
        .map((x) => [x.data.name, (x.data.payload as { codes: string[] }).codes]),
    );
    // A tool extension may publish tool.progress_reported: only there is its data judged.
    const expected = ["unauthorized", "unauthorized", "unauthorized", "invalid"];
    expect(reports).toEqual({ live: expected, early: expected });
    expect(ui.deliveries().filter((x) => x.name === FORBIDDEN)).toEqual([]);
  });
});
