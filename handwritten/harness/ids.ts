// Identifiers tau mints: a kind prefix, a time-ordered part and randomness, within the Id pattern.
import { randomBytes } from "node:crypto";

export function mintId(prefix: "s" | "a" | "p" | "r" | "c"): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(6).toString("hex")}`;
}
