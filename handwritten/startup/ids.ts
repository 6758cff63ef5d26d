// Identifiers tau mints: a kind prefix, a time-ordered part and randomness, within the Id pattern.
import { randomHex } from "./random.js";

export function mintId(prefix: "s" | "a" | "p" | "r" | "c" | "pm"): string {
  return `${prefix}-${Date.now().toString(36)}-${randomHex(6)}`;
}
