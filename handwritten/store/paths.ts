// Where the journals live under the state root. A module of its own (no journal code), so the daemon's
// first, small part can look for a session's journal before it loads the store.
import * as path from "node:path";
import { StoreError } from "./errors.js";
import { isValidId } from "./validate.js";

export type JournalKind = "agent" | "session" | "restore";

export function journalPath(stateDir: string, kind: JournalKind, id: string): string {
  checkId(id);
  if (kind === "agent") return path.join(stateDir, "agents", id, "events.cbor");
  return path.join(stateDir, "sessions", id, kind === "session" ? "events.cbor" : "restore-events.cbor");
}

/** The checkpoint file beside a journal: an agent's and a session's `meta.json`, the restore stream's `restore-meta.json`. */
export function checkpointPath(stateDir: string, kind: JournalKind, id: string): string {
  const journal = journalPath(stateDir, kind, id);
  return path.join(path.dirname(journal), kind === "restore" ? "restore-meta.json" : "meta.json");
}

export function checkId(id: string): void {
  // The id pattern admits no "/" and no leading ".", so an id can never leave its directory.
  if (!isValidId(id)) throw new StoreError("bad_id", `not a valid tau id: ${JSON.stringify(id)}`);
}
