// A loopback stand-in for the ChatGPT WebSocket endpoint and its sign-in (SPEC-provider-websocket):
// `GET {base}/responses` upgraded to a WebSocket (with the `ws` server) whose `response.create`
// frames are answered by scripted Responses events, one JSON text frame each; and the device code
// sign-in and token endpoints under `{auth}`. It checks the bearer token of every upgrade against
// the access tokens it issued, so refreshes are real.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import type { ScriptedResponse } from "./fake-openai.js";

/** The JSON frames of a scripted Responses SSE stream (its `data:` lines). */
export function framesOf(stream: ScriptedResponse): string[] {
  const out: string[] = [];
  for (const c of stream.chunks ?? []) {
    const text = typeof c === "string" ? c : (c as { data: string }).data;
    for (const line of text.split("\n")) if (line.startsWith("data: ")) out.push(line.slice(6));
  }
  return out;
}

/** What a `response.create` is answered with: frames, and optionally a close instead of the rest. */
export interface WsScript {
  frames: string[];
  /** Close the connection (with this code) after the frames. */
  closeWith?: number;
}

/** How one upgrade is answered instead of accepted. */
export type UpgradeScript =
  | { kind: "redirect"; location: string }
  | { kind: "status"; status: number; headers?: Record<string, string>; body?: string }
  | { kind: "accept"; headers?: Record<string, string> };

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
export const fakeJwt = (claims: Record<string, unknown>) => `${b64({ alg: "none" })}.${b64(claims)}.sig`;

export class FakeCodex {
  readonly upgrades: Array<{ url: string; headers: IncomingMessage["headers"] }> = [];
  readonly requests: Array<{ body: Record<string, unknown>; connection: number }> = [];
  readonly oauthCalls: Array<{ path: string; body: string }> = [];
  readonly sockets = new Set<WebSocket>();
  connections = 0;
  /** Access tokens the server accepts. */
  readonly valid = new Set<string>();
  /** Polls answered "pending" (403) before the device code counts as entered. */
  pendingPolls = 1;
  /** Refresh tokens the server refuses. */
  readonly revoked = new Set<string>();
  issued = 0;
  #scripts: WsScript[] = [];
  #upgrades: UpgradeScript[] = [];
  #server!: Server;
  #wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  #open = new Set<Socket>();
  port = 0;

  #scheme = "http";

  /** With `tls`, the stand-in serves https and wss with that certificate. */
  static async start(o: { tls?: { key: Buffer; cert: Buffer } } = {}): Promise<FakeCodex> {
    const f = new FakeCodex();
    f.#scheme = o.tls ? "https" : "http";
    f.#server = o.tls ? createTlsServer(o.tls, (req, res) => f.#http(req, res)) : createServer((req, res) => f.#http(req, res));
    f.#server.on(o.tls ? "secureConnection" : "connection", (s: Socket) => {
      f.#open.add(s);
      s.on("close", () => f.#open.delete(s));
    });
    f.#server.on("upgrade", (req, socket, head) => f.#upgrade(req, socket as Socket, head));
    await new Promise<void>((r) => f.#server.listen(0, "127.0.0.1", r));
    f.port = (f.#server.address() as AddressInfo).port;
    return f;
  }

  get baseUrl(): string {
    return `${this.#scheme}://127.0.0.1:${this.port}/backend-api/codex`;
  }

  get authUrl(): string {
    return `${this.#scheme}://127.0.0.1:${this.port}/auth`;
  }

  enqueue(...scripts: WsScript[]): void {
    this.#scripts.push(...scripts);
  }

  enqueueUpgrade(...u: UpgradeScript[]): void {
    this.#upgrades.push(...u);
  }

  /** Issues a token pair the server accepts (as a sign-in would). */
  issue(expiresIn = 3600): { access_token: string; refresh_token: string; id_token: string; expires_in: number } {
    this.issued++;
    const access = `at-${this.issued}-${Math.random().toString(36).slice(2)}`;
    this.valid.add(access);
    return { access_token: access, refresh_token: `rt-${this.issued}-${Math.random().toString(36).slice(2)}`, id_token: fakeJwt({ "https://api.openai.com/auth": { chatgpt_account_id: "acct-fake-1" } }), expires_in: expiresIn };
  }

  #upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    this.upgrades.push({ url: req.url ?? "", headers: req.headers });
    const u = this.#upgrades.shift();
    const reply = (status: number, headers: Record<string, string>, body = "") => {
      const lines = [`HTTP/1.1 ${status} X`, ...Object.entries({ ...headers, "content-length": String(Buffer.byteLength(body)), connection: "close" }).map(([k, v]) => `${k}: ${v}`)];
      socket.end(`${lines.join("\r\n")}\r\n\r\n${body}`);
    };
    if (u?.kind === "redirect") return reply(302, { location: u.location });
    if (u?.kind === "status") return reply(u.status, { "content-type": "application/json", ...u.headers }, u.body ?? "");
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (!req.url?.endsWith("/responses")) return reply(404, {});
    if (bearer === undefined || !this.valid.has(bearer)) return reply(401, { "content-type": "application/json" }, JSON.stringify({ error: { code: "token_expired", message: "the access token is not valid" } }));
    if (u?.kind === "accept" && u.headers) {
      const extra = u.headers;
      this.#wss.once("headers", (headers) => {
        for (const [k, v] of Object.entries(extra)) headers.push(`${k}: ${v}`);
      });
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      const connection = ++this.connections;
      this.sockets.add(ws);
      ws.on("close", () => this.sockets.delete(ws));
      ws.on("message", (data) => {
        const body = JSON.parse(String(data)) as Record<string, unknown>;
        this.requests.push({ body, connection });
        const script = this.#scripts.shift() ?? { frames: [JSON.stringify({ type: "error", status: 500, error: { type: "server_error", message: "no scripted response" } })] };
        for (const f of script.frames) ws.send(f);
        if (script.closeWith !== undefined) ws.close(script.closeWith);
      });
    });
  }

  #http(req: IncomingMessage, res: ServerResponse): void {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => {
      const path = (req.url ?? "").replace(/^\/auth/, "");
      this.oauthCalls.push({ path, body });
      const json = (status: number, v: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(v));
      if (path === "/api/accounts/deviceauth/usercode") return json(200, { device_auth_id: "dev-1", user_code: "ABCD-1234", interval: "1" });
      if (path === "/api/accounts/deviceauth/token") {
        if (this.pendingPolls > 0) {
          this.pendingPolls--;
          return json(403, { error: "authorization_pending" });
        }
        return json(200, { authorization_code: "auth-code-1", code_challenge: "ch", code_verifier: "ver-1" });
      }
      if (path === "/oauth/token") {
        if (body.includes("grant_type=authorization_code")) return json(200, this.issue());
        const r = JSON.parse(body) as { refresh_token?: string };
        if (r.refresh_token === undefined || this.revoked.has(r.refresh_token)) return json(401, { error: "invalid_grant" });
        return json(200, this.issue());
      }
      json(404, { error: "not found" });
    });
  }

  /** Ends every open WebSocket from the server's side (a kept connection let go). */
  dropConnections(): void {
    for (const ws of this.sockets) ws.terminate();
  }

  async close(): Promise<void> {
    for (const ws of this.sockets) ws.terminate();
    for (const s of this.#open) s.destroy();
    this.#wss.close();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }
}
