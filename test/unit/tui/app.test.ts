// The interactive UI attached over a real socket, with the real session client, to a scripted
// daemon peer that replays a history it was given; what the UI writes goes into a real terminal
// emulator (@xterm/headless) through a terminal-sized stream.
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import xterm from "@xterm/headless";
import { TuiApp, type Exit } from "../../../handwritten/cli/tui/app.js";
import { HISTORY_SHOWN_SCREENS } from "../../../handwritten/cli/tui/scrollback.js";
import { OUTPUT_PREVIEW_LINES, TRANSCRIPT_MAX_ITEMS } from "../../../handwritten/cli/tui/transcript.js";
import { SessionClient } from "../../../handwritten/cli/session-client.js";
import { listenUnix, type Connection, type UnixServer } from "../../../handwritten/transport/index.js";
import { REVISION, eventProblem } from "../../../handwritten/protocol/index.js";
import type { WireMessage } from "../../../generated/index.js";
import { waitFor } from "../../support/wait.js";

const { Terminal } = xterm;
const SESSION = "s-0123456789abcdef";
const AGENT = "a-0123456789abcdef";

type Event = { name: string; data: Record<string, unknown> };

/** A terminal-sized output stream whose bytes a real terminal emulator interprets. */
class Screen extends Writable {
  readonly term: InstanceType<typeof Terminal>;
  bytes = 0;
  private pending = Promise.resolve();
  constructor(
    public columns: number,
    public rows: number,
  ) {
    super();
    this.term = new Terminal({ cols: columns, rows, scrollback: 200_000, allowProposedApi: true });
  }
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void): void {
    const s = typeof chunk === "string" ? chunk : chunk.toString("utf8");
    this.bytes += Buffer.byteLength(s);
    this.pending = this.pending.then(() => new Promise<void>((r) => this.term.write(s, r)));
    done();
  }
  /** Scrollback and screen, rows right-trimmed, once everything written so far is interpreted. */
  async lines(): Promise<string[]> {
    await this.pending;
    const b = this.term.buffer.active;
    const out: string[] = [];
    for (let y = 0; y < b.length; y++) out.push(b.getLine(y)?.translateToString(true) ?? "");
    return out;
  }
  /** The visible screen only. */
  async view(): Promise<string[]> {
    const all = await this.lines();
    const top = this.term.buffer.active.viewportY;
    return all.slice(top, top + this.term.rows);
  }
}

/** A daemon stand-in: accepts one UI, replays `history` on subscribe, then sends what the test says. */
class ScriptedDaemon {
  private conn: Connection | undefined;
  private seq = 0;
  private constructor(
    readonly server: UnixServer,
    readonly dir: string,
  ) {}

  static async start(history: Event[]): Promise<ScriptedDaemon> {
    const dir = mkdtempSync(join(tmpdir(), "tau-tui-app-"));
    let daemon: ScriptedDaemon | undefined;
    const server = await listenUnix(join(dir, "run", "1-00000000000000aa.sock"), {
      onConnection: (conn) => {
        if (daemon) daemon.conn = conn;
        conn.onMessage((m: WireMessage) => {
          if (m.message === "hello") conn.send({ message: "ui_session_accepted", payload: { session_id: SESSION, revision: { ...REVISION }, project_root: "/p" } } as WireMessage);
          if (m.message === "subscribe") void daemon?.replay(history);
        });
      },
    });
    daemon = new ScriptedDaemon(server, dir);
    return daemon;
  }

  private async send(e: Event, replay: boolean): Promise<void> {
    // The client drops an invalid event: a fixture mistake shows here, not as a timeout.
    expect(eventProblem(e as never)?.message).toBeUndefined();
    const payload = { event: e, seq: this.seq++, recorded_at: 1_700_000_000_000_000 + this.seq, publisher: { class: "harness" }, ...(replay ? { replay: true } : {}) };
    expect(await this.conn?.sendAsync({ message: "deliver", payload } as WireMessage)).toBe("queued");
  }

  private async replay(history: Event[]): Promise<void> {
    for (const e of history) await this.send(e, true);
    await this.send({ name: "session.replay_complete", data: { replayed: history.length, omitted: 0 } }, true);
  }

  async live(events: Event[]): Promise<void> {
    for (const e of events) await this.send(e, false);
  }

  async close(): Promise<void> {
    await this.server.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function attach(history: Event[], size = { cols: 80, rows: 24 }): Promise<{ app: TuiApp; screen: Screen; daemon: ScriptedDaemon; keys: PassThrough; exit: Promise<Exit> }> {
  const daemon = await ScriptedDaemon.start(history);
  cleanups.push(() => daemon.close());
  const screen = new Screen(size.cols, size.rows);
  const keys = new PassThrough();
  const app = new TuiApp({ input: keys, output: screen }, "/nonexistent", 1);
  app.start();
  cleanups.push(() => app.stop());
  const client = await SessionClient.attach(daemon.server.path, SESSION);
  cleanups.push(() => client.close());
  const exit = app.run({ client, sessionId: SESSION });
  return { app, screen, daemon, keys, exit };
}

const until = (pred: () => boolean | Promise<boolean>, what: string): Promise<void> => waitFor(pred, what, { timeoutMs: 20_000, pollMs: 20 });

/** `turns` dense turns: a prompt, a 20-line shell command, an answer (three transcript entries each). */
function denseHistory(turns: number, agent = AGENT, tag = ""): Event[] {
  const events: Event[] = [
    { name: "agent.started", data: { agent_id: agent, session_id: SESSION, creator: "ui", model: "fake-model", cwd: "/p", ephemeral: false } },
    { name: "harness.models_available", data: { models: [{ provider: "fake", id: "fake-model" }] } },
  ];
  for (let i = 0; i < turns; i++) {
    const output = Array.from({ length: 20 }, (_, l) => `out ${tag}${i}.${l}`).join("\n");
    events.push(
      { name: "agent.prompt_submitted", data: { agent_id: agent, prompt_id: `p-${i}`, source: "human_ui", mode: "queue", text: `prompt ${tag}${i}` } },
      { name: "shell.command_finished", data: { agent_id: agent, request_id: `r-${i}`, command: `cmd ${tag}${i}`, output, exit_code: 0, include_in_context: true } },
      { name: "provider.response_finished", data: { agent_id: agent, prompt_id: `p-${i}`, round: 1, model: "fake-model", text: `answer ${tag}${i}`, tool_calls: [], finish_reason: "stop" } },
    );
  }
  return events;
}

const ready = (lines: string[]) => lines.some((l) => l.includes(" · ready"));

describe("the interactive UI attaching to a long history", () => {
  it("[tui.history.bounded-start] writes only the newest screens of a long replay, below one line counting the rest", async () => {
    const turns = 3000;
    const { screen } = await attach(denseHistory(turns));
    let lines: string[] = [];
    await until(async () => ready((lines = await screen.lines())), "the session to be ready");
    const used = lines.filter((l) => l !== "");
    // The session note, the summary, at most HISTORY_SHOWN_SCREENS screens, then the live region.
    expect(used.length, used.join("\n")).toBeLessThanOrEqual(1 + 1 + HISTORY_SHOWN_SCREENS * 24 + 24);
    const summary = lines.findIndex((l) => /^… [\d,]+ earlier entries not shown$/.test(l));
    expect(summary, lines.slice(0, 40).join("\n")).toBeGreaterThan(0);
    expect(lines[summary - 1]).toBe(`session ${SESSION}`);
    // Whole entries follow it, the newest last: every entry is either counted or shown.
    const shown = lines.filter((l) => /^(› prompt|! cmd|answer) \d+/.test(l)).length;
    expect(Number(lines[summary]?.replace(/\D/g, "")) + shown).toBe(3 * turns);
    expect(lines.slice(summary + 1).find((l) => l !== "")).toMatch(/^(› prompt|! cmd|answer) \d+/);
    expect(lines).toContain(`answer ${turns - 1}`);
    expect(lines).toContain(`out ${turns - 1}.${OUTPUT_PREVIEW_LINES - 1}`);
    expect(lines).not.toContain("answer 0");
  });

  it("keeps writing new entries of a live session once the transcript holds its maximum", async () => {
    const { app, screen, daemon } = await attach(denseHistory(1));
    await until(async () => ready(await screen.lines()), "the session to be ready");
    const prompts = (from: number, n: number): Event[] =>
      Array.from({ length: n }, (_, i) => ({ name: "agent.prompt_submitted", data: { agent_id: AGENT, prompt_id: `q-${from + i}`, source: "human_ui", mode: "queue", text: `live ${from + i}` } }));
    for (let i = 0; i < TRANSCRIPT_MAX_ITEMS + 100; i += 100) {
      await daemon.live(prompts(i, 100));
      await until(async () => (await screen.lines()).includes(`› live ${i + 99}`), `live prompt ${i + 99}`);
    }
    app.draw();
    expect((await screen.lines()).filter((l) => l === `› live ${TRANSCRIPT_MAX_ITEMS + 99}`)).toHaveLength(1);
  });

  it("switching to an agent with a long history writes only its newest screens too", async () => {
    const other = "a-fedcba9876543210";
    const named = { name: "agent.metadata_set", data: { agent_id: other, key: "display_name", value: "helper", by: { class: "ui_attached", generation: 1 } } };
    const { screen, keys } = await attach([...denseHistory(1500, other, "h"), named, ...denseHistory(2)]);
    await until(async () => ready(await screen.lines()), "the session to be ready");
    expect(await screen.lines()).toContain("answer 1");
    const before = screen.bytes;
    keys.write(":agent switch helper\r");
    await until(async () => (await screen.lines()).some((l) => l.startsWith("tau · helper")), "the switch");
    const lines = await screen.lines();
    expect(lines.some((l) => /^… 4,4\d\d earlier entries not shown$/.test(l)), lines.slice(-100).join("\n")).toBe(true);
    expect(lines).toContain("answer h1499");
    expect(lines).not.toContain("answer h0");
    // A few screens of rows, not 1,500 turns of them.
    expect(screen.bytes - before).toBeLessThan(64 * 1024);
  });

  it("after a resize, redraws the newest written rows back to the summary of what was left out", async () => {
    const { screen } = await attach(denseHistory(500), { cols: 80, rows: 12 });
    await until(async () => ready(await screen.lines()), "the session to be ready");
    // Three screens of 12 rows: the newest entries, whole (a prompt and an answer start with a blank row).
    const written = await screen.lines();
    const summary = written.findIndex((l) => l.startsWith("… "));
    expect(written.slice(summary, summary + 3)).toEqual(["… 1,494 earlier entries not shown", "", "› prompt 498"]);
    screen.term.resize(60, 40);
    screen.columns = 60;
    screen.rows = 40;
    screen.emit("resize");
    await until(async () => (await screen.view()).some((l) => l.startsWith("tau ·") && l.length === 60), "the redraw at 60 columns");
    // The taller screen has room for more, but only what was written is redrawn, under its summary.
    const view = await screen.view();
    const at = view.indexOf("… 1,494 earlier entries not shown");
    expect(at, view.join("\n")).toBeGreaterThanOrEqual(0);
    expect(view.slice(at + 1, at + 3)).toEqual(["", "› prompt 498"]);
    expect(view.some((l) => l.startsWith("out 497."))).toBe(false);
    expect(view).toContain("answer 499");
  });
});
