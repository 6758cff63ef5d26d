// records/*.md → parsed records: front matter, sections, authority rows, gate test ids, links.
import { readdirSync, readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import type { Problems } from "./errors.js";

export const RECORD_KINDS = ["ARCH", "SPEC", "GATE", "DECISION", "REQ"] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

export const PUBLISHER_CLASSES = [
  "harness",
  "ext:tool",
  "ext:core",
  "ext:provider",
  "ext:action",
  "ext:any",
  "ui:attached",
  "ui:embedded",
  "socket:other",
  "peer:external",
] as const;
export const CAPABILITIES = ["message_bridge"] as const;
export const PERSISTENCE_CLASSES = ["agent", "session", "restore", "transient", "snapshot", "directed"] as const;
export type Persistence = (typeof PERSISTENCE_CLASSES)[number];

const GATE_STATUSES = ["proposed", "enforced"];
const OTHER_STATUSES = ["draft", "accepted", "superseded"];
const AUTHORITY_HEADER = ["event", "publishers", "persistence", "protected", "successor"];
const ID_PATTERN = /^(ARCH|SPEC|GATE|DECISION|REQ)-[a-z0-9]+(-[a-z0-9]+)*$/;
const TEST_ID_PATTERN = /^[a-z0-9]+(?:[.-][a-z0-9]+)+$/;

export interface AuthorityRow {
  event: string;
  publishers: string[];
  persistence: Persistence;
  protected: boolean;
  successors: string[];
  record: string;
}

export interface ParsedRecord {
  id: string;
  kind: RecordKind;
  status: string;
  title: string;
  links: string[];
  bodyLinks: string[];
  file: string;
  body: string;
  sha256: string;
  sections: Map<string, string>;
  authority: AuthorityRow[];
  requiredTests: string[];
}

export function loadRecords(root: string, problems: Problems): ParsedRecord[] {
  const dir = join(root, "records");
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".md"))
    .sort();
  const records: ParsedRecord[] = [];
  for (const name of files) {
    const file = `records/${name}`;
    const text = readFileSync(join(dir, name), "utf8");
    const parsed = parseRecord(file, name.slice(0, -3), text, problems);
    if (parsed) records.push(parsed);
  }
  const ids = new Set(records.map((r) => r.id));
  for (const r of records) {
    for (const link of [...r.links, ...r.bodyLinks]) {
      if (!ids.has(link)) problems.add(r.file, `links to missing record ${link}`);
    }
  }
  return records;
}

function parseRecord(file: string, stem: string, text: string, problems: Problems): ParsedRecord | undefined {
  const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
  if (!match) {
    problems.add(file, "missing YAML front matter between --- lines");
    return undefined;
  }
  let front: unknown;
  try {
    front = parseYaml(match[1] ?? "");
  } catch (err) {
    problems.add(file, `front matter is not valid YAML: ${(err as Error).message.split("\n")[0]}`);
    return undefined;
  }
  const body = match[2] ?? "";
  if (typeof front !== "object" || front === null) {
    problems.add(file, "front matter must be a map with id, kind, status, links");
    return undefined;
  }
  const fm = front as Record<string, unknown>;
  const id = fm.id;
  const kind = fm.kind;
  const status = fm.status;
  const links = fm.links ?? [];
  let ok = true;
  if (typeof id !== "string" || !ID_PATTERN.test(id)) {
    problems.add(file, `front matter id must be KIND-slug (lowercase words joined by -), got ${JSON.stringify(id)}`);
    ok = false;
  } else if (id !== stem) {
    problems.add(file, `front matter id ${id} does not match the file name ${stem}`);
    ok = false;
  }
  if (typeof kind !== "string" || !(RECORD_KINDS as readonly string[]).includes(kind)) {
    problems.add(file, `kind must be one of ${RECORD_KINDS.join(", ")}, got ${JSON.stringify(kind)}`);
    ok = false;
  } else if (typeof id === "string" && !id.startsWith(`${kind}-`)) {
    problems.add(file, `id ${id} does not start with its kind ${kind}-`);
    ok = false;
  }
  const allowedStatus = kind === "GATE" ? GATE_STATUSES : OTHER_STATUSES;
  if (typeof status !== "string" || !allowedStatus.includes(status)) {
    problems.add(file, `status must be one of ${allowedStatus.join(", ")}, got ${JSON.stringify(status)}`);
    ok = false;
  }
  if (!Array.isArray(links) || !links.every((l) => typeof l === "string")) {
    problems.add(file, "links must be a list of record ids");
    ok = false;
  }
  if (!ok) return undefined;

  const sections = splitSections(body);
  const titleMatch = /^#\s+(.+)$/m.exec(body);
  const bodyLinks = [...body.matchAll(/\]\(([A-Z]+-[a-z0-9-]+)\.md(?:#[^)]*)?\)/g)].map((m) => m[1] ?? "");
  const record: ParsedRecord = {
    id: id as string,
    kind: kind as RecordKind,
    status: status as string,
    title: titleMatch?.[1]?.trim() ?? (id as string),
    links: [...(links as string[])],
    bodyLinks: [...new Set(bodyLinks)].sort(),
    file,
    body,
    sha256: createHash("sha256").update(text).digest("hex"),
    sections,
    authority: [],
    requiredTests: [],
  };
  if (record.kind === "GATE") {
    for (const name of ["Gate", "Justification", "Required tests"]) {
      if (!sections.has(name)) problems.add(file, `GATE is missing its ## ${name} section`);
    }
    record.requiredTests = parseRequiredTests(file, sections.get("Required tests") ?? "", problems);
  }
  if (sections.has("Authority")) {
    record.authority = parseAuthority(file, record.id, body, problems);
  }
  return record;
}

function splitSections(body: string): Map<string, string> {
  const sections = new Map<string, string>();
  const parts = body.split(/^## /m);
  for (const part of parts.slice(1)) {
    const nl = part.indexOf("\n");
    const name = (nl === -1 ? part : part.slice(0, nl)).trim();
    sections.set(name, nl === -1 ? "" : part.slice(nl + 1));
  }
  return sections;
}

function parseRequiredTests(file: string, text: string, problems: Problems): string[] {
  const ids: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const m = /^- (\S+)$/.exec(line);
    if (!m || !TEST_ID_PATTERN.test(m[1] ?? "")) {
      problems.add(file, `## Required tests: "${line}" is not a "- test.id" bullet (lowercase words joined by . or -)`);
      continue;
    }
    ids.push(m[1] ?? "");
  }
  if (ids.length === 0) problems.add(file, "## Required tests lists no test id");
  return ids;
}

function parseAuthority(file: string, id: string, body: string, problems: Problems): AuthorityRow[] {
  const lines = body.split("\n");
  const start = lines.findIndex((l) => l.trim() === "## Authority");
  const rows: AuthorityRow[] = [];
  let seenHeader = false;
  for (let i = start + 1; i < lines.length; i++) {
    const line = (lines[i] ?? "").trim();
    if (line.startsWith("## ")) break;
    if (!line.startsWith("|")) {
      if (seenHeader && line !== "") break;
      continue;
    }
    const cells = line
      .replace(/^\|/, "")
      .replace(/\|$/, "")
      .split("|")
      .map((c) => c.trim());
    if (!seenHeader) {
      if (cells.join("|") !== AUTHORITY_HEADER.join("|")) {
        problems.add(file, `## Authority header must be | ${AUTHORITY_HEADER.join(" | ")} |`);
        return rows;
      }
      seenHeader = true;
      continue;
    }
    if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
    if (cells.length !== 5) {
      problems.add(file, `authority row "${line}" has ${cells.length} cells, expected 5`);
      continue;
    }
    const [event, publishers, persistence, prot, successor] = cells as [string, string, string, string, string];
    const where = `authority row ${event}`;
    const pubs = publishers.split(",").map((p) => p.trim());
    for (const p of pubs) {
      const [cls, cap, ...rest] = p.split("+");
      if (!(PUBLISHER_CLASSES as readonly string[]).includes(cls ?? "") || rest.length > 0) {
        problems.add(file, `${where}: unknown publisher class "${p}"`);
      } else if (cap !== undefined && !(CAPABILITIES as readonly string[]).includes(cap)) {
        problems.add(file, `${where}: unknown capability "${cap}" in "${p}"`);
      }
    }
    if (!(PERSISTENCE_CLASSES as readonly string[]).includes(persistence)) {
      problems.add(file, `${where}: unknown persistence class "${persistence}"`);
    }
    if (prot !== "yes" && prot !== "no") problems.add(file, `${where}: protected must be yes or no, got "${prot}"`);
    const successors = successor === "—" || successor === "-" ? [] : successor.split(",").map((s) => s.trim());
    rows.push({
      event,
      publishers: pubs,
      persistence: persistence as Persistence,
      protected: prot === "yes",
      successors,
      record: id,
    });
  }
  if (!seenHeader) problems.add(file, "## Authority section has no table");
  return rows;
}
