// A small incremental Server-Sent Events parser (the subset of the WHATWG `text/event-stream`
// format that model providers use): bytes go in at any split, complete events come out.
//
// Lines end with LF, CRLF or a lone CR (a CR at the end of one chunk and an LF at the start of the
// next are one line end). Comment lines (`:`), `event:`, `data:`, `id:` and `retry:` are understood;
// unknown fields are ignored, but for `error:`: llama.cpp's server reports a failure in a stream as
// an `error: <json>` line, which is passed on at once as an event named `error` with that value. A blank line dispatches the event when it carries data. Lines are
// split on raw bytes (UTF-8 continuation bytes never equal CR or LF) and decoded strictly, so
// invalid UTF-8 is an error rather than a silent replacement character.
//
// Bounds (SPEC-provider-chat-completions): a single line may hold at most SSE_MAX_LINE_BYTES bytes
// and one event's data at most SSE_MAX_EVENT_BYTES bytes. The line bound is enforced while bytes
// are still arriving, so an endless line never grows the buffer past the bound.

/** Largest accepted SSE line, in bytes, excluding its line end. */
export const SSE_MAX_LINE_BYTES = 1_048_576;
/** Largest accepted data of one event (all `data:` lines joined), in bytes. */
export const SSE_MAX_EVENT_BYTES = 2_097_152;

export interface SseEvent {
  /** The `event:` field, `"message"` when absent. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The last `id:` seen, when any. */
  id?: string;
}

export type SseErrorCode = "line_too_long" | "event_too_large" | "invalid_utf8";

export class SseError extends Error {
  override readonly name = "SseError";
  constructor(
    readonly code: SseErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface SseParserOptions {
  maxLineBytes?: number;
  maxEventBytes?: number;
}

const CR = 0x0d;
const LF = 0x0a;

export class SseParser {
  readonly #maxLineBytes: number;
  readonly #maxEventBytes: number;
  readonly #decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  #lineParts: Uint8Array[] = [];
  #lineBytes = 0;
  #afterCR = false;
  #atStreamStart = true;
  #eventType = "";
  #data: string[] = [];
  #dataBytes = 0;
  #hasData = false;
  #lastId: string | undefined;
  #failed: SseError | undefined;

  constructor(options: SseParserOptions = {}) {
    this.#maxLineBytes = options.maxLineBytes ?? SSE_MAX_LINE_BYTES;
    this.#maxEventBytes = options.maxEventBytes ?? SSE_MAX_EVENT_BYTES;
  }

  /** Feeds bytes; returns the events completed by them. Throws SseError (and stays failed). */
  push(chunk: Uint8Array): SseEvent[] {
    if (this.#failed) throw this.#failed;
    const out: SseEvent[] = [];
    try {
      let start = 0;
      for (let i = 0; i < chunk.length; i++) {
        const b = chunk[i];
        if (b !== CR && b !== LF) continue;
        if (b === LF && this.#afterCR && i === start && this.#lineBytes === 0 && this.#lineParts.length === 0) {
          // The LF of a CRLF whose CR ended the previous chunk (or the previous line).
          this.#afterCR = false;
          start = i + 1;
          continue;
        }
        this.#appendPart(chunk.subarray(start, i));
        this.#finishLine(out);
        this.#afterCR = b === CR;
        start = i + 1;
      }
      if (start < chunk.length) {
        this.#afterCR = false;
        this.#appendPart(chunk.subarray(start));
      }
    } catch (err) {
      if (err instanceof SseError) this.#failed = err;
      throw err;
    }
    return out;
  }

  /**
   * The byte stream ended cleanly. A final line without a line end is processed, and an event with
   * data that lacks its closing blank line is still dispatched (lenient towards servers that omit
   * it; a truncated JSON payload then fails where it is parsed).
   */
  end(): SseEvent[] {
    if (this.#failed) throw this.#failed;
    const out: SseEvent[] = [];
    try {
      if (this.#lineParts.length > 0) this.#finishLine(out);
      this.#dispatch(out);
    } catch (err) {
      if (err instanceof SseError) this.#failed = err;
      throw err;
    }
    return out;
  }

  #appendPart(part: Uint8Array): void {
    if (part.length === 0) return;
    this.#lineBytes += part.length;
    if (this.#lineBytes > this.#maxLineBytes) {
      throw new SseError("line_too_long", `SSE line longer than ${this.#maxLineBytes} bytes`);
    }
    // Copy: the caller may reuse its buffer.
    this.#lineParts.push(part.slice());
  }

  #finishLine(out: SseEvent[]): void {
    const bytes = this.#takeLine();
    let line: string;
    try {
      line = this.#decoder.decode(bytes);
    } catch {
      throw new SseError("invalid_utf8", "SSE stream is not valid UTF-8");
    }
    if (this.#atStreamStart) {
      this.#atStreamStart = false;
      if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    }
    if (line.length === 0) {
      this.#dispatch(out);
      return;
    }
    if (line.charCodeAt(0) === 0x3a /* ':' */) return; // comment
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    let prefixBytes = colon === -1 ? bytes.length : colon + 1;
    if (value.charCodeAt(0) === 0x20) {
      value = value.slice(1);
      prefixBytes += 1;
    }
    switch (field) {
      case "data": {
        // "data" is ASCII, so the prefix's UTF-16 length is its byte length.
        const size = bytes.length - prefixBytes;
        this.#dataBytes += size + (this.#hasData ? 1 : 0);
        if (this.#dataBytes > this.#maxEventBytes) {
          throw new SseError("event_too_large", `SSE event data larger than ${this.#maxEventBytes} bytes`);
        }
        this.#data.push(value);
        this.#hasData = true;
        break;
      }
      case "event":
        this.#eventType = value;
        break;
      case "error":
        out.push({ event: "error", data: value });
        break;
      case "id":
        if (!value.includes("\u0000")) this.#lastId = value;
        break;
      default:
        // `retry:` and unknown fields: ignored (reconnection is not used).
        break;
    }
  }

  #takeLine(): Uint8Array {
    const parts = this.#lineParts;
    const total = this.#lineBytes;
    this.#lineParts = [];
    this.#lineBytes = 0;
    if (parts.length === 1) return parts[0] as Uint8Array;
    const bytes = new Uint8Array(total);
    let at = 0;
    for (const p of parts) {
      bytes.set(p, at);
      at += p.length;
    }
    return bytes;
  }

  #dispatch(out: SseEvent[]): void {
    if (this.#hasData) {
      const event: SseEvent = { event: this.#eventType === "" ? "message" : this.#eventType, data: this.#data.join("\n") };
      if (this.#lastId !== undefined) event.id = this.#lastId;
      out.push(event);
    }
    this.#eventType = "";
    this.#data = [];
    this.#dataBytes = 0;
    this.#hasData = false;
  }
}
