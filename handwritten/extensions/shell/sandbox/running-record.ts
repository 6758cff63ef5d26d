// The record of the sandboxed commands running now (SPEC-sandbox, "Created during a command"):
// which protected paths of the project did not exist when they started (checked only after them)
// and which mount points bubblewrap made outside the project for them. It is on disk while a
// command runs and removed when none does, so a start after this extension was killed mid-command
// does what the check after the command would have done.
import { lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomHex } from "../../../startup/random.js";
import { processStart } from "../tools/index.js";
import { quarantine, watchedFindings, type Watched } from "./project-scan.js";
import { within } from "./policy.js";
import { removeMountPoints } from "./wrap-cache.js";

/** A record is read only up to this size (it lists a few dozen paths). */
const RECORD_MAX_BYTES = 1 << 20;

interface Record {
  readonly pid: number;
  readonly start: string;
  readonly project: string;
  readonly watched: readonly Watched[];
  readonly mountPoints: readonly string[];
}

/** The folder of the records, in tau's state root (which no sandboxed command can write). */
export function recordsDir(stateRoot: string): string {
  return join(stateRoot, "sandbox-running");
}

export class RunningRecord {
  private readonly file: string;
  private written: string | undefined;

  constructor(
    private readonly dir: string,
    private readonly project: string,
  ) {
    this.file = join(dir, `${process.pid}.json`);
  }

  /** Records what the running commands watch and the mount points they use (written when it changed). */
  update(watched: readonly Watched[], mountPoints: readonly string[]): void {
    const text = JSON.stringify({ pid: process.pid, start: processStart(process.pid), project: this.project, watched, mountPoints } satisfies Record);
    if (text === this.written) return;
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const temp = `${this.file}.${randomHex(4)}.tmp`;
      writeFileSync(temp, text, { mode: 0o600 });
      renameSync(temp, this.file);
      this.written = text;
    } catch {
      // Without a record a crash mid-command leaves what the command made unchecked, as before.
    }
  }

  /** No sandboxed command runs: nothing to recover. */
  clear(): void {
    if (this.written === undefined) return;
    this.written = undefined;
    rmSync(this.file, { force: true });
  }
}

function parse(text: string): Record | undefined {
  let r: unknown;
  try {
    r = JSON.parse(text);
  } catch {
    return undefined;
  }
  const o = r as Partial<Record>;
  const path = (p: unknown): p is string => typeof p === "string" && p.startsWith("/") && !p.includes("\0");
  if (typeof o.pid !== "number" || typeof o.start !== "string" || !path(o.project)) return undefined;
  if (!Array.isArray(o.watched) || !o.watched.every((w) => typeof w === "object" && w !== null && path((w as Watched).path) && ["whole", "hooks", "config"].includes((w as Watched).rule))) return undefined;
  if (!Array.isArray(o.mountPoints) || !o.mountPoints.every(path)) return undefined;
  return o as Record;
}

/**
 * After a crash: for every record of this project whose owner is gone (its pid dead, or another
 * process's now), checks its watched paths as the check after the command would have (what it made
 * of them is moved into `quarantineRoot`), removes its mount points while still empty, and removes
 * the record. Records of live owners and of other projects are left alone. Returns notes.
 */
export function recoverAfterCrash(stateRoot: string, project: string): string[] {
  const dir = recordsDir(stateRoot);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const notes: string[] = [];
  for (const name of names) {
    const file = join(dir, name);
    let record: Record | undefined;
    try {
      if (lstatSync(file).size > RECORD_MAX_BYTES) continue;
      record = parse(readFileSync(file, "utf8"));
    } catch {
      continue;
    }
    if (record === undefined || record.project !== project || processStart(record.pid) === record.start) continue;
    const watched = record.watched.filter((w) => within(w.path, project) && w.path !== project);
    const into = join(stateRoot, "sandbox-quarantine", `${new Date().toISOString().replace(/[:.]/g, "-")}-${randomHex(4)}`);
    for (const note of quarantine(watchedFindings(watched), project, into)) notes.push(note.replace("[sandbox: moved", "[sandbox: after a command cut short (tau was killed), moved"));
    removeMountPoints(record.mountPoints);
    rmSync(file, { force: true });
  }
  return notes;
}
