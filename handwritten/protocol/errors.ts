// Typed wire errors: a code and a short, safe description that never echoes frame content.

export type WireErrorCode = "oversize" | "bad_cbor" | "invalid" | "unknown_message";

export class WireError extends Error {
  constructor(
    readonly code: WireErrorCode,
    description: string,
  ) {
    super(`${code}: ${description}`);
    this.name = "WireError";
  }

  /** Whether the stream can continue after this error (frame boundaries are still known). */
  get recoverable(): boolean {
    return this.code !== "oversize";
  }
}
