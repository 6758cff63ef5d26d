// A prompt round travels to its provider as a head (`provider.request`) and parts
// (`provider.request_part`) so that no frame nears the frame cap, whatever the transcript's size
// (SPEC-provider-execution). The harness splits a whole call; the SDK reassembles it.
import type { ProviderMessage, ProviderRequest, ProviderRequestPart, ToolSpec } from "../../generated/index.js";

/** A whole prompt round as a provider works with it. */
export type ProviderCall = Omit<ProviderRequest, "parts"> & { readonly messages: ProviderMessage[]; readonly tools: ToolSpec[] };

/** Most text (UTF-8 bytes of message texts, arguments and tool specs) one part carries. */
export const PROVIDER_PART_BYTES = 4 * 1024 * 1024;
/** Most CBOR items one part carries: well inside a frame's item bound (MAX_FRAME_ITEMS). */
export const PROVIDER_PART_ITEMS = 200_000;
/** Most messages one part carries (the schema's bound). */
export const PROVIDER_PART_MESSAGES = 100_000;
/** Most parts one request may have (the schema's bound): far beyond any transcript a model accepts. */
export const PROVIDER_MAX_PARTS = 1_048_576;

function textBytes(s: string | undefined): number {
  return s === undefined ? 0 : Buffer.byteLength(s);
}

/** CBOR items of a value as the wire encodes it: every value, map key and container. */
function itemsOf(v: unknown): number {
  if (Array.isArray(v)) {
    let n = 1;
    for (const x of v) n += itemsOf(x);
    return n;
  }
  if (v !== null && typeof v === "object") {
    let n = 1;
    for (const x of Object.values(v)) if (x !== undefined) n += 1 + itemsOf(x);
    return n;
  }
  return 1;
}

function messageBytes(m: ProviderMessage): number {
  let n = 64 + textBytes(m.text) + textBytes(m.reasoning) + textBytes(m.call_id);
  for (const c of m.tool_calls ?? []) n += 64 + textBytes(c.call_id) + textBytes(c.tool) + textBytes(c.arguments_json);
  for (const r of m.reasoning_items ?? []) n += 64 + textBytes(r.id) + textBytes(r.encrypted_content) + textBytes(r.summary);
  return n;
}

/** `text` cut into pieces of at most `max` UTF-8 bytes, never inside a character. */
function splitText(text: string, max: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    // At most 3 bytes per UTF-16 unit: `max / 3` units always fit; then never end on a high surrogate.
    let end = Math.min(text.length, start + Math.max(1, Math.floor(max / 3)));
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/** Splits a call into its head and its parts (at least one), each within the part bounds. */
export function splitProviderCall(call: ProviderCall, maxBytes = PROVIDER_PART_BYTES): { head: ProviderRequest; parts: ProviderRequestPart[] } {
  const parts: ProviderRequestPart[] = [];
  let messages: ProviderMessage[] = [];
  let tools: ToolSpec[] = [];
  let bytes = 0;
  let items = 0;
  const flush = () => {
    parts.push({ prompt_id: call.prompt_id, round: call.round, index: parts.length, messages, tools });
    messages = [];
    tools = [];
    bytes = 0;
    items = 0;
  };
  /** Starts a new part unless this one has room for `n` bytes and `k` items more. */
  const room = (n: number, k: number) => {
    if (bytes > 0 && (bytes + n > maxBytes || items + k > PROVIDER_PART_ITEMS || messages.length >= PROVIDER_PART_MESSAGES)) flush();
  };
  for (const t of call.tools) {
    const n = 64 + textBytes(t.name) + textBytes(t.description) + Buffer.byteLength(JSON.stringify(t.parameters));
    const k = itemsOf(t);
    room(n, k);
    tools.push(t);
    bytes += n;
    items += k;
  }
  for (const m of call.messages) {
    const n = messageBytes(m);
    if (n <= maxBytes) {
      const k = itemsOf(m);
      room(n, k);
      messages.push(m);
      bytes += n;
      items += k;
      continue;
    }
    // Too large for one part: it gets parts of its own. A long text and a long reasoning go in
    // quarter-part pieces, side by side, the first with the message's other fields (which arrived in
    // one frame, so they fit one).
    const quarter = Math.floor(maxBytes / 4);
    const texts = textBytes(m.text) > quarter ? splitText(m.text as string, quarter) : [m.text];
    const reasonings = textBytes(m.reasoning) > quarter ? splitText(m.reasoning as string, quarter) : [m.reasoning];
    for (let i = 0; i < Math.max(texts.length, reasonings.length); i++) {
      if (bytes > 0) flush();
      const entry: ProviderMessage = i === 0 ? { ...m } : { role: m.role, continues: true };
      if (i === 0 || texts[i] !== undefined) {
        if (texts[i] === undefined) delete entry.text;
        else entry.text = texts[i] as string;
      }
      if (i === 0 || reasonings[i] !== undefined) {
        if (reasonings[i] === undefined) delete entry.reasoning;
        else entry.reasoning = reasonings[i] as string;
      }
      messages.push(entry);
      bytes = maxBytes;
    }
  }
  if (bytes > 0 || parts.length === 0) flush();
  const { messages: _m, tools: _t, ...rest } = call;
  return { head: { ...rest, parts: parts.length }, parts };
}

/**
 * Reassembles calls from heads and parts as they arrive (parts of one call in order). `add` returns
 * the whole call once its last part is in; a part out of order, or for no head, is an error.
 */
export class ProviderCallAssembler {
  private readonly pending = new Map<string, { head: ProviderRequest; messages: ProviderMessage[]; tools: ToolSpec[]; next: number }>();

  private static key(promptId: string, round: number): string {
    return `${promptId}/${round}`;
  }

  head(head: ProviderRequest): void {
    this.pending.set(ProviderCallAssembler.key(head.prompt_id, head.round), { head, messages: [], tools: [], next: 0 });
  }

  /** Adds a part; the whole call when it was the last one, undefined while more are to come. */
  part(part: ProviderRequestPart): ProviderCall | undefined {
    const key = ProviderCallAssembler.key(part.prompt_id, part.round);
    const p = this.pending.get(key);
    if (!p) throw new Error(`a request part for ${key}, which has no head`);
    if (part.index !== p.next) {
      this.pending.delete(key);
      throw new Error(`request part ${part.index} of ${key} arrived where part ${p.next} was due`);
    }
    p.next++;
    p.tools.push(...part.tools);
    for (const m of part.messages) {
      const prev = p.messages[p.messages.length - 1];
      if (m.continues === true && prev !== undefined) {
        if (m.text !== undefined) prev.text = (prev.text ?? "") + m.text;
        if (m.reasoning !== undefined) prev.reasoning = (prev.reasoning ?? "") + m.reasoning;
      } else {
        const { continues: _c, ...whole } = m;
        p.messages.push({ ...whole });
      }
    }
    if (p.next < p.head.parts) return undefined;
    this.pending.delete(key);
    const { parts: _n, ...rest } = p.head;
    return { ...rest, messages: p.messages, tools: p.tools };
  }

  /** Forgets a call still being assembled (it was cancelled). */
  drop(promptId: string, round: number): void {
    this.pending.delete(ProviderCallAssembler.key(promptId, round));
  }
}
