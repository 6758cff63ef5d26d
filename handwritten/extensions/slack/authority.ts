// The bridge's actionable authority, kept only in this process (SPEC-slack, "Reply authority"):
// tau-issued reply selectors bound to the exact source (conversation, thread, verified human,
// agent), dynamic direct-message links, retained exact-message refs and the reactions this bridge
// added. Every map is bounded; the oldest entry goes first. Nothing here is ever derived from
// model-supplied native ids: the model holds only opaque tau-issued names.
import { randomBytes } from "node:crypto";

/** Live reply selectors kept at most. */
export const MAX_REPLY_SELECTORS = 1024;
/** Retained exact-message refs kept at most. */
export const MAX_MESSAGE_REFS = 1024;

/** Where a reply goes: an exact conversation and thread, for one agent. */
export interface ReplyTarget {
  readonly channel: string;
  /** The thread answered in; absent for a top-level direct message (answered at top level). */
  readonly threadTs: string | undefined;
  /** The verified human the selector answers (the only one its optional mention may name). */
  readonly user: string;
  readonly agentId: string;
  /** The route's alias, or `dm` for a dynamic direct-message link. */
  readonly via: string;
}

export interface MessageRef {
  readonly channel: string;
  readonly ts: string;
  readonly agentId: string;
  readonly via: string;
  /** The human of the source message (a DM ref is live only while that user's link is). */
  readonly user: string;
}

/** A map that forgets its oldest entry past `max`. */
class Bounded<V> {
  private readonly m = new Map<string, V>();
  constructor(private readonly max: number) {}
  set(k: string, v: V): void {
    this.m.delete(k);
    this.m.set(k, v);
    while (this.m.size > this.max) this.m.delete(this.m.keys().next().value as string);
  }
  get(k: string): V | undefined {
    return this.m.get(k);
  }
  delete(k: string): boolean {
    return this.m.delete(k);
  }
  clear(): void {
    this.m.clear();
  }
  get size(): number {
    return this.m.size;
  }
}

const mint = (prefix: string): string => `${prefix}-${randomBytes(9).toString("base64url")}`;

export class Authority {
  private readonly selectors = new Bounded<ReplyTarget>(MAX_REPLY_SELECTORS);
  private readonly refs = new Bounded<MessageRef>(MAX_MESSAGE_REFS);
  /** Dynamic DM links: the user → their DM conversation, bounded by `direct_messages.max_links`. */
  private readonly dmLinks: Bounded<string>;
  /** Reactions this bridge added: `ref name` → the agent that added it. */
  private readonly ownReactions = new Bounded<string>(MAX_MESSAGE_REFS);

  constructor(maxDmLinks: number) {
    this.dmLinks = new Bounded<string>(maxDmLinks);
  }

  /** Issues a reply selector for an admitted message. */
  issueReply(target: ReplyTarget): string {
    const id = mint("r");
    this.selectors.set(id, target);
    return id;
  }

  reply(selector: string): ReplyTarget | undefined {
    const t = this.selectors.get(selector);
    // A DM selector is live only while its link is: an evicted link takes its selectors with it.
    if (t !== undefined && t.via === "dm" && this.dmLinks.get(t.user) !== t.channel) return undefined;
    return t;
  }

  /** Opens (or refreshes) the reply-only link of a direct message with exactly this user. */
  linkDm(user: string, channel: string): void {
    this.dmLinks.set(user, channel);
  }

  get dmLinkCount(): number {
    return this.dmLinks.size;
  }

  retain(ref: MessageRef): string {
    const id = mint("m");
    this.refs.set(id, ref);
    return id;
  }

  message(ref: string): MessageRef | undefined {
    const m = this.refs.get(ref);
    if (m !== undefined && m.via === "dm" && this.dmLinks.get(m.user) !== m.channel) return undefined;
    return m;
  }

  ownsReaction(ref: string, name: string, agentId: string): boolean {
    return this.ownReactions.get(`${ref} ${name}`) === agentId;
  }

  recordReaction(ref: string, name: string, agentId: string): void {
    this.ownReactions.set(`${ref} ${name}`, agentId);
  }

  forgetReaction(ref: string, name: string): void {
    this.ownReactions.delete(`${ref} ${name}`);
  }

  /** Forgets every route, link, ref and reaction (the receiving agent left, or the session changed). */
  clear(): void {
    this.selectors.clear();
    this.refs.clear();
    this.dmLinks.clear();
    this.ownReactions.clear();
  }
}
