// Revision negotiation (SPEC-wire-protocol): equal continues, same major warns once, other major
// is refused before configure.
import type { Revision } from "../../generated/index.js";
import { REVISION } from "./limits.js";

export type RevisionVerdict = "equal" | "compatible" | "incompatible";

export function compareRevision(peer: Revision, ours: Revision = REVISION): RevisionVerdict {
  if (peer.major !== ours.major) return "incompatible";
  return peer.minor === ours.minor ? "equal" : "compatible";
}
