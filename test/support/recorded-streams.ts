// Replaying a recorded provider stream (test/fixtures/provider/…) through the loopback server, and
// reading back the journal of the one agent a `tau run` made.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./paths.js";
import type { ScriptedResponse } from "./fake-openai.js";
import { replayJournal, validateJournalRecord, type JournalRecord } from "../../handwritten/store/index.js";

export const PROVIDER_FIXTURES = join(REPO_ROOT, "test/fixtures/provider");

/** The SSE events of a fixture's body, as the server sent them (each event with its blank line). */
export function fixtureEvents(file: string): string[] {
  return readFileSync(join(PROVIDER_FIXTURES, file), "utf8").split(/(?<=\n\n)/);
}

/** A fixture's body as the server sent it, one write per event (so it arrives as a stream). */
export function replay(file: string): ScriptedResponse {
  return { headers: { "content-type": "text/event-stream; charset=utf-8" }, chunks: fixtureEvents(file) };
}

export type Journal = Array<{ name: string; data: Record<string, unknown> }>;

/** The events of the only agent's journal under `home`, in order. */
export function onlyAgentJournal(home: string): Journal {
  const agents = join(home, "state", "agents");
  const [id] = readdirSync(agents);
  const r = replayJournal<JournalRecord>(join(agents, id as string, "events.cbor"), { validate: validateJournalRecord });
  return r.records.map((x) => ({ name: x.event.name, data: x.event.data as Record<string, unknown> }));
}
