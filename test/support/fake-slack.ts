// A loopback stand-in for Slack (SPEC-slack), speaking the wire protocol of Slack's public API
// reference as @slack/socket-mode 3.1.0 and @slack/web-api 8.2.0 use it:
// - Web API: `POST {base}/api/<method>`, the token in `Authorization: Bearer`, the arguments
//   form-urlencoded (objects as JSON strings), answered `200 {ok: true, …}` or `{ok: false, error}`.
// - Socket Mode: `apps.connections.open` (app-level token) answers a `wss` URL; the WebSocket there
//   sends `{type: "hello", …}`, then `events_api` envelopes, each of which the client acknowledges
//   with `{envelope_id, payload}`.
// Each test scripts it: users and their kinds, the installation `auth.test` reports, the envelopes it
// sends (any wrapper field may be overridden or removed), and Web API failures.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { randomBytes } from "node:crypto";
import { WebSocketServer, type WebSocket } from "ws";
import { waitFor } from "./wait.js";

export interface FakeSlackUser {
  id: string;
  team_id?: string;
  name?: string;
  is_bot?: boolean;
  deleted?: boolean;
  is_app_user?: boolean;
}

/** One Web API call as received: the method, the token it carried and its decoded arguments. */
export interface SlackCall {
  method: string;
  token: string | undefined;
  args: Record<string, string>;
}

/** A posted message, as `chat.postMessage` stored it. */
export interface PostedMessage {
  channel: string;
  ts: string;
  text: string;
  thread_ts?: string;
  args: Record<string, string>;
}

export interface EnvelopeOptions {
  /** The Events API `event_id` (the native occurrence id); fresh when absent. */
  event_id?: string;
  /** Fields of the `event_callback` wrapper replaced (undefined removes one). */
  wrapper?: Record<string, unknown>;
}

export class FakeSlack {
  readonly calls: SlackCall[] = [];
  readonly posted: PostedMessage[] = [];
  /** Reactions present, `channel ts name`. */
  readonly reactions = new Set<string>();
  /** Close codes of ended Socket Mode connections (1006: dropped without a close frame). */
  readonly closeCodes: number[] = [];
  /** Envelope ids the client acknowledged, in order. */
  readonly acks: string[] = [];
  readonly users = new Map<string, FakeSlackUser>();
  /** What `auth.test` reports of the bot token's installation. */
  identity = { team_id: "T0TEAM", team: "Team", user_id: "U0BOT", user: "taubot", bot_id: "B0BOT", app_id: "A0APP" };
  /** Held methods: their calls wait until the hold is released. */
  private readonly holds = new Map<string, Promise<void>>();
  /** Scripted failures: method → errors answered to its next calls, in order. */
  private readonly failures = new Map<string, string[]>();
  private readonly sockets = new Set<WebSocket>();
  private readonly tickets = new Set<string>();
  private readonly http: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly open = new Set<Socket>();
  private seq = 0;

  private constructor(
    readonly botToken: string,
    readonly appToken: string,
  ) {
    this.http = createServer((req, res) => void this.serve(req, res));
    this.http.on("connection", (s) => {
      this.open.add(s);
      s.on("close", () => this.open.delete(s));
    });
    this.http.on("upgrade", (req, socket, head) => this.upgrade(req, socket as Socket, head));
  }

  static async start(o: { botToken?: string; appToken?: string } = {}): Promise<FakeSlack> {
    const s = new FakeSlack(o.botToken ?? `xoxb-${randomBytes(8).toString("hex")}`, o.appToken ?? `xapp-${randomBytes(8).toString("hex")}`);
    await new Promise<void>((resolve) => s.http.listen(0, "127.0.0.1", resolve));
    return s;
  }

  get port(): number {
    return (this.http.address() as AddressInfo).port;
  }

  /** The Web API base URL (`slackApiUrl`). */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  /** Live Socket Mode connections. */
  get connections(): number {
    return this.sockets.size;
  }

  addUser(u: FakeSlackUser): void {
    this.users.set(u.id, u);
  }

  /** The next calls of `method` answer `{ok: false, error}`, one per error. */
  failNext(method: string, ...errors: string[]): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), ...errors]);
  }

  /** Holds every call of `method` (answered only once the returned function is called). */
  hold(method: string): () => void {
    let release!: () => void;
    this.holds.set(method, new Promise<void>((resolve) => (release = resolve)));
    return () => {
      this.holds.delete(method);
      release();
    };
  }

  callsOf(method: string): SlackCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** Waits for a live Socket Mode connection that has been sent `hello`. */
  async connected(ms = 30_000): Promise<void> {
    await waitFor(() => this.sockets.size > 0, "a Socket Mode connection", ms);
  }

  /**
   * Sends an `events_api` envelope carrying `event` on every live connection and returns its
   * envelope id; `acked` waits for its acknowledgement.
   */
  sendEvent(event: Record<string, unknown>, o: EnvelopeOptions = {}): string {
    const envelopeId = `env-${++this.seq}-${randomBytes(4).toString("hex")}`;
    const wrapper: Record<string, unknown> = {
      token: "verification-token-unused",
      team_id: this.identity.team_id,
      context_team_id: this.identity.team_id,
      context_enterprise_id: null,
      api_app_id: this.identity.app_id,
      event,
      type: "event_callback",
      event_id: o.event_id ?? `Ev${randomBytes(5).toString("hex").toUpperCase()}`,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [{ enterprise_id: null, team_id: this.identity.team_id, user_id: this.identity.user_id, is_bot: true, is_enterprise_install: false }],
      is_ext_shared_channel: false,
      event_context: `4-${randomBytes(6).toString("hex")}`,
    };
    for (const [k, v] of Object.entries(o.wrapper ?? {})) {
      if (v === undefined) delete wrapper[k];
      else wrapper[k] = v;
    }
    const frame = JSON.stringify({ envelope_id: envelopeId, payload: wrapper, type: "events_api", accepts_response_payload: false, retry_attempt: 0, retry_reason: "" });
    for (const ws of this.sockets) ws.send(frame);
    return envelopeId;
  }

  /** A human's (or anyone's) channel message event, as Slack's `message` event carries it. */
  message(o: { user?: string; channel: string; channel_type?: string; text: string; thread_ts?: string; ts?: string; subtype?: string; bot_id?: string; team?: string }): Record<string, unknown> {
    const ts = o.ts ?? this.nextTs();
    return {
      type: "message",
      ...(o.subtype !== undefined ? { subtype: o.subtype } : {}),
      ...(o.user !== undefined ? { user: o.user } : {}),
      ...(o.bot_id !== undefined ? { bot_id: o.bot_id } : {}),
      text: o.text,
      ts,
      ...(o.thread_ts !== undefined ? { thread_ts: o.thread_ts } : {}),
      team: o.team ?? this.identity.team_id,
      channel: o.channel,
      channel_type: o.channel_type ?? "channel",
      event_ts: ts,
    };
  }

  async acked(envelopeId: string, ms = 10_000): Promise<void> {
    await waitFor(() => this.acks.includes(envelopeId), `the acknowledgement of ${envelopeId}`, ms);
  }

  /** Sends Socket Mode's `disconnect` (the client is expected to reconnect). */
  askToReconnect(): void {
    for (const ws of this.sockets) ws.send(JSON.stringify({ type: "disconnect", reason: "refresh_requested", debug_info: { host: "fake-slack" } }));
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    this.wss.close();
    for (const s of this.open) s.destroy();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  nextTs(): string {
    return `${1_700_000_000 + ++this.seq}.${String(this.seq).padStart(6, "0")}`;
  }

  private upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const url = new URL(req.url ?? "/", "http://x");
    const ticket = url.searchParams.get("ticket") ?? "";
    if (url.pathname !== "/link/" || !this.tickets.delete(ticket)) {
      socket.end("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.sockets.add(ws);
      ws.on("close", (code) => {
        this.sockets.delete(ws);
        this.closeCodes.push(code);
      });
      ws.on("message", (data, isBinary) => {
        if (isBinary) return;
        try {
          const m = JSON.parse(String(data)) as { envelope_id?: unknown };
          if (typeof m.envelope_id === "string") this.acks.push(m.envelope_id);
        } catch {
          // not JSON: Slack ignores it too
        }
      });
      ws.send(JSON.stringify({ type: "hello", num_connections: this.sockets.size, debug_info: { host: "fake-slack", approximate_connection_time: 18060 }, connection_info: { app_id: this.identity.app_id } }));
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? "/", "http://x");
    const method = url.pathname.startsWith("/api/") ? url.pathname.slice(5) : "";
    const auth = req.headers.authorization;
    const token = auth?.startsWith("Bearer ") ? auth.slice(7) : undefined;
    const args = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString("utf8")));
    this.calls.push({ method, token, args });
    await this.holds.get(method);
    const answer = (body: Record<string, unknown>): void => {
      res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
      res.end(JSON.stringify(body));
    };
    const failure = this.failures.get(method)?.shift();
    if (failure !== undefined) return answer({ ok: false, error: failure });
    const needs = method === "apps.connections.open" ? this.appToken : this.botToken;
    if (token === undefined) return answer({ ok: false, error: "not_authed" });
    if (token !== needs) return answer({ ok: false, error: "invalid_auth" });
    answer(this.method(method, args));
  }

  private method(method: string, args: Record<string, string>): Record<string, unknown> {
    const id = this.identity;
    switch (method) {
      case "apps.connections.open": {
        const ticket = randomBytes(8).toString("hex");
        this.tickets.add(ticket);
        return { ok: true, url: `ws://127.0.0.1:${this.port}/link/?ticket=${ticket}&app_id=${id.app_id}` };
      }
      case "auth.test":
        return { ok: true, url: "https://team.slack.example/", team: id.team, user: id.user, team_id: id.team_id, user_id: id.user_id, bot_id: id.bot_id, is_enterprise_install: false };
      case "users.info": {
        const u = this.users.get(args.user ?? "");
        if (!u) return { ok: false, error: "user_not_found" };
        const name = u.name ?? u.id.toLowerCase();
        return { ok: true, user: { id: u.id, team_id: u.team_id ?? id.team_id, name, deleted: u.deleted === true, is_bot: u.is_bot === true, is_app_user: u.is_app_user === true, profile: { display_name: name, real_name: name } } };
      }
      case "chat.postMessage": {
        if (!args.channel) return { ok: false, error: "channel_not_found" };
        if (!args.text) return { ok: false, error: "no_text" };
        const ts = this.nextTs();
        const m: PostedMessage = { channel: args.channel, ts, text: args.text, ...(args.thread_ts ? { thread_ts: args.thread_ts } : {}), args };
        this.posted.push(m);
        return { ok: true, channel: m.channel, ts, message: { type: "message", user: id.user_id, bot_id: id.bot_id, text: m.text, ts, ...(m.thread_ts ? { thread_ts: m.thread_ts } : {}) } };
      }
      case "reactions.add": {
        const key = `${args.channel} ${args.timestamp} ${args.name}`;
        if (this.reactions.has(key)) return { ok: false, error: "already_reacted" };
        this.reactions.add(key);
        return { ok: true };
      }
      case "reactions.remove": {
        const key = `${args.channel} ${args.timestamp} ${args.name}`;
        if (!this.reactions.delete(key)) return { ok: false, error: "no_reaction" };
        return { ok: true };
      }
      default:
        return { ok: false, error: "unknown_method" };
    }
  }
}
