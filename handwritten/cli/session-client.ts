// A UI client of one session daemon: attach, subscribe, emit, and the requests spec/ declares
// (`request(REQUESTS.x, …)`, protocol/requests.ts). Shared by the headless `tau run` and the
// interactive UI.
import { setExtensionCommands } from "./tui/colon-commands.js";
import { connectUnix, type Connection } from "../transport/index.js";
import { REVISION, carriedDelivery, notify, request, requestKind, type AnsweredRequestName, type EventDelivery, type NotificationName, type RequestOptions } from "../protocol/index.js";
import { REQUESTS, type EventName, type EventPayloads, type RequestParams, type RequestResults, type Selector, type WireMessage } from "../../generated/index.js";

/** A delivered event, typed by its name (the reader checked it against its schema). */
export type Delivery = EventDelivery;

export class SessionClient {
  private readonly listeners = new Set<(d: Delivery) => void>();
  private readonly replies = new Set<(m: Extract<WireMessage, { message: "error" | "notice" }>) => void>();
  private readonly waiters = new Set<(m: WireMessage) => boolean>();

  private constructor(readonly conn: Connection) {
    conn.onMessage((m) => {
      if (m.message === "deliver") {
        const d = carriedDelivery(m.payload);
        for (const l of this.listeners) l(d);
      }
      if (m.message === "error" || m.message === "notice") for (const l of this.replies) l(m);
      if (m.message === "ui_extension_commands") setExtensionCommands(m.payload.commands);
      for (const w of [...this.waiters]) if (w(m)) this.waiters.delete(w);
    });
  }

  static async attach(socket: string, sessionId: string): Promise<SessionClient> {
    const conn = await connectUnix(socket);
    const client = new SessionClient(conn);
    const accepted = client.wait((m) => m.message === "ui_session_accepted" || m.message === "error");
    conn.send({ message: "hello", payload: { revision: { ...REVISION }, role: "ui", session_id: sessionId, client: "tau cli" } });
    const m = await accepted;
    if (m.message !== "ui_session_accepted") throw new Error(`the daemon refused to attach: ${m.message === "error" ? m.payload.code : m.message}`);
    return client;
  }

  onDeliver(listener: (d: Delivery) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Content-free refusals (`error`) and directed notices the daemon sends this connection. */
  onReply(listener: (m: Extract<WireMessage, { message: "error" | "notice" }>) => void): () => void {
    this.replies.add(listener);
    return () => this.replies.delete(listener);
  }

  /** Resolves with the first message matching `pred` (or rejects when the connection ends first). */
  wait(pred: (m: WireMessage) => boolean): Promise<WireMessage> {
    return new Promise((resolve, reject) => {
      const w = (m: WireMessage) => {
        if (!pred(m)) return false;
        resolve(m);
        return true;
      };
      this.waiters.add(w);
      void this.conn.closed.then((reason) => {
        if (this.waiters.delete(w)) reject(new Error(`the daemon connection ended (${reason.kind})`));
      });
    });
  }

  /** `recent`: replay at most that many of each journal's most recent records (a bounded attach). */
  subscribe(historical: readonly Selector[], live: readonly Selector[], recent?: number): void {
    this.conn.send({ message: "subscribe", payload: { historical: [...historical], live: [...live], ...(recent !== undefined ? { recent } : {}) } });
  }

  emit<N extends EventName>(name: N, data: EventPayloads[N]): void {
    this.conn.send({ message: "emit", payload: { event: { name, data } } });
  }

  /**
   * Sends request `name` as spec/ declares it (`REQUESTS`, protocol/requests.ts) and resolves with
   * its answer, or rejects with a RequestError (refused, or the connection ended first).
   */
  request<N extends AnsweredRequestName>(name: N, params: RequestParams[N], options?: RequestOptions): Promise<RequestResults[N]> {
    return request(this.conn, requestKind(name), params, options);
  }

  /** Sends notification `name` (a request that is never answered). */
  notify<N extends NotificationName>(name: N, params: RequestParams[N]): void {
    notify(this.conn, requestKind(name), params);
  }

  close(): void {
    this.conn.close("client done");
  }
}
