// A UI client of one session daemon: attach, subscribe, create agents, submit prompts. Shared by
// the headless `tau run` and the interactive UI.
import { connectUnix, type Connection } from "../transport/index.js";
import { REVISION, carriedDelivery, carriedEvent, type EventDelivery } from "../protocol/index.js";
import type { EventName, EventPayloads, NavigationMode, RosterRow, Selector, UiCreateAgent, WireMessage } from "../../generated/index.js";

/** A delivered event, typed by its name (the reader checked it against its schema). */
export type Delivery = EventDelivery;

export class SessionClient {
  private readonly listeners = new Set<(d: Delivery) => void>();
  private readonly replies = new Set<(m: Extract<WireMessage, { message: "error" | "notice" }>) => void>();
  private readonly waiters = new Set<(m: WireMessage) => boolean>();
  private nextRequest = 1;

  private constructor(readonly conn: Connection) {
    conn.onMessage((m) => {
      if (m.message === "deliver") {
        const d = carriedDelivery(m.payload);
        for (const l of this.listeners) l(d);
      }
      if (m.message === "error" || m.message === "notice") for (const l of this.replies) l(m);
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

  /** A page of one agent's history before journal position `before` (its end when absent). */
  async historyPage(agentId: string, before: number | undefined, limit: number): Promise<Extract<WireMessage, { message: "ui_history_result" }>["payload"]> {
    const request_id = `r-cli-${process.pid}-${this.nextRequest++}`;
    const answer = this.wait((m) => (m.message === "ui_history_result" || m.message === "error") && m.payload.request_id === request_id);
    this.conn.send({ message: "ui_history_request", payload: { request_id, agent_id: agentId, limit, ...(before !== undefined ? { before } : {}) } });
    const m = await answer;
    if (m.message !== "ui_history_result") throw new Error("the session has no history for that agent");
    return m.payload;
  }

  /**
   * The session's agents from the roster (SPEC-agent-team), every page up to `maxRows` (the rest is
   * counted in `total`, not fetched).
   */
  async roster(o: { includeUnloaded?: boolean; maxRows?: number } = {}): Promise<{ rows: RosterRow[]; total: number }> {
    const maxRows = o.maxRows ?? 4096;
    const rows: RosterRow[] = [];
    let cursor: string | undefined;
    let total = 0;
    do {
      const request_id = `r-cli-${process.pid}-${this.nextRequest++}`;
      const answer = this.wait((m) => (m.message === "ui_roster_result" || m.message === "error") && m.payload.request_id === request_id);
      this.conn.send({ message: "ui_roster_request", payload: { request_id, include_unloaded: o.includeUnloaded === true, ...(cursor !== undefined ? { cursor } : {}) } });
      const m = await answer;
      if (m.message !== "ui_roster_result") throw new Error("the session refused to list its agents");
      rows.push(...m.payload.rows);
      total = m.payload.total;
      cursor = m.payload.next_cursor;
    } while (cursor !== undefined && rows.length < maxRows);
    return { rows: rows.slice(0, maxRows), total };
  }

  /** Sets an agent's navigation mode (SPEC-agent-navigation); resolves with the mode it has now. */
  async setNavigation(agentId: string, mode: NavigationMode): Promise<NavigationMode> {
    const request_id = `r-cli-${process.pid}-${this.nextRequest++}`;
    const answer = this.wait((m) => (m.message === "ui_navigation_result" || m.message === "error") && m.payload.request_id === request_id);
    this.conn.send({ message: "ui_navigation_request", payload: { request_id, agent_id: agentId, mode } });
    const m = await answer;
    if (m.message !== "ui_navigation_result") throw new Error(`the session has no loaded agent ${agentId}`);
    return m.payload.mode;
  }

  emit<N extends EventName>(name: N, data: EventPayloads[N]): void {
    this.conn.send({ message: "emit", payload: { event: { name, data } } });
  }

  async createAgent(fields: Omit<UiCreateAgent, "request_id"> = {}): Promise<string> {
    const request_id = `r-cli-${process.pid}-${this.nextRequest++}`;
    const answer = this.directed("ui.create_agent_result", request_id);
    this.emit("ui.create_agent", { request_id, ...fields });
    const data = await answer;
    if (!data.ok || !data.agent_id) throw new Error(`could not create an agent: ${data.error ?? "refused"}`);
    return data.agent_id;
  }

  /** The directed answer `name` to request `requestId`. */
  private async directed<N extends "ui.create_agent_result" | "ui.skill_load_result">(name: N, requestId: string): Promise<EventPayloads[N]> {
    const m = await this.wait((x) => x.message === "direct" && x.payload.event.name === name && x.payload.event.data.request_id === requestId);
    const e = m.message === "direct" ? carriedEvent(m.payload.event) : undefined;
    if (e?.name !== name) throw new Error("unexpected answer");
    return e.data as EventPayloads[N];
  }

  /**
   * Loads a skill into an agent (SPEC-skills): resolves with the submitted prompt's id, or rejects
   * with the harness's reason (an unknown skill submits nothing).
   */
  async loadSkill(agentId: string, name: string, fields: { text?: string; mode?: "queue" | "steer" } = {}): Promise<string> {
    const request_id = `r-cli-${process.pid}-${this.nextRequest++}`;
    const answer = this.directed("ui.skill_load_result", request_id);
    this.emit("ui.skill_load", { request_id, agent_id: agentId, name, ...fields });
    const data = await answer;
    if (!data.ok || !data.prompt_id) throw new Error(data.error ?? "the skill was not loaded");
    return data.prompt_id;
  }

  close(): void {
    this.conn.close("client done");
  }
}
