// `tau spec events [--json]`: the authority matrix, one row per event.
import { Command, Flags } from "@oclif/core";
import { AUTHORITY, EVENT_NAMES } from "../../../../generated/index.js";

export interface EventRow {
  event: string;
  publishers: string[];
  persistence: string;
  protected: boolean;
  successors: string[];
  record: string;
}

export function authorityRows(): EventRow[] {
  return EVENT_NAMES.map((event) => {
    const row = AUTHORITY[event];
    return {
      event,
      publishers: [...row.publishers],
      persistence: row.persistence,
      protected: row.protected,
      successors: [...row.successors],
      record: row.record,
    };
  });
}

export function formatTable(rows: EventRow[]): string {
  const header = ["EVENT", "PUBLISHERS", "PERSISTENCE", "PROTECTED", "SUCCESSORS"];
  const cells = rows.map((r) => [
    r.event,
    r.publishers.join(","),
    r.persistence,
    r.protected ? "yes" : "no",
    r.successors.length > 0 ? r.successors.join(",") : "-",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? "").length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), ...cells.map(line)].join("\n");
}

export default class SpecEvents extends Command {
  static override summary = "Print the event authority matrix: who may publish each event and how it is stored.";
  static override examples = ["<%= config.bin %> spec events", "<%= config.bin %> spec events --json"];
  static override flags = {
    json: Flags.boolean({ description: "Print a JSON array, one object per event." }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(SpecEvents);
    const rows = authorityRows();
    this.log(flags.json ? JSON.stringify(rows, null, 2) : formatTable(rows));
  }
}
