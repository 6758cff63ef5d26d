// The conformance tables in records/: found by their exact header, read row by row with the line
// each row is on, so a problem in a table names `records/X.md:line`.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Problems } from "../errors.js";

export interface TableRow {
  readonly cells: readonly string[];
  /** `records/X.md:line` */
  readonly where: string;
}

/**
 * The rows of the one table in `records/<id>.md` whose header is exactly `header` (cells compared
 * without backticks); a missing or repeated table is a TAU-C090 problem and yields no rows.
 */
export function readRecordTable(root: string, id: string, header: readonly string[], problems: Problems): TableRow[] {
  const file = `records/${id}.md`;
  let text: string;
  try {
    text = readFileSync(join(root, file), "utf8");
  } catch {
    problems.coded("TAU-C090", file, `missing: it holds the table | ${header.join(" | ")} |`);
    return [];
  }
  const lines = text.split("\n");
  const tables: TableRow[][] = [];
  for (let i = 0; i < lines.length; i++) {
    const cells = splitRow(lines[i] ?? "");
    if (cells === undefined || cells.join("|") !== header.join("|")) continue;
    const rows: TableRow[] = [];
    for (let j = i + 1; j < lines.length; j++) {
      const row = splitRow(lines[j] ?? "");
      if (row === undefined) break;
      if (row.every((c) => /^:?-+:?$/.test(c))) continue;
      const where = `${file}:${j + 1}`;
      if (row.length !== header.length) {
        problems.coded("TAU-C090", where, `row has ${row.length} cells, expected ${header.length} (| ${header.join(" | ")} |)`);
        continue;
      }
      rows.push({ cells: row, where });
    }
    tables.push(rows);
  }
  if (tables.length !== 1) {
    problems.coded("TAU-C090", file, `needs exactly one table headed | ${header.join(" | ")} |, found ${tables.length}`);
    return [];
  }
  return tables[0] ?? [];
}

/** A markdown table row's cells without backticks, or undefined for a line that is not a row. */
function splitRow(line: string): string[] | undefined {
  const t = line.trim();
  if (!t.startsWith("|")) return undefined;
  return t
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split("|")
    .map((c) => c.trim().replace(/`/g, ""));
}

/** A comma-separated cell as a list; `—` or `-` is the empty list. */
export function listCell(cell: string): string[] {
  if (cell === "—" || cell === "-" || cell === "") return [];
  return cell
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}
