// Saved sessions in the terminal: the resume picker (by title, age and project, filtered as the user
// types, on the plain terminal before the interactive UI takes it) and the interactive UI's
// `:sessions` list. The picker's model (filtering, moving, the rows it shows) is separate from the
// terminal driver, which restores the terminal however it ends.
import { sanitize, truncateEnd } from "../ui/index.js";
import { KeyDecoder, type Key } from "./keys.js";
import { ageLabel } from "../../sessions/format.js";
import type { SavedSession } from "../../sessions/index.js";
import type { UiContext } from "./context.js";

export interface PickerEntry {
  readonly id: string;
  readonly title?: string;
  readonly project?: string;
  /** Milliseconds since the epoch. */
  readonly lastActive: number;
}

/** Most rows the picker shows at once. */
export const PICKER_ROWS = 10;
/** Longest filter kept (characters). */
const FILTER_MAX_CHARS = 200;
/** How long a lone ESC waits for the rest of a sequence before it counts as the Escape key. */
const ESC_WAIT_MS = 50;

/** Most sessions `:sessions` lists. */
const SESSIONS_SHOWN = 20;

/** The words of a filter, lower case. */
function filterWords(filter: string): string[] {
  return filter.toLowerCase().split(/\s+/).filter(Boolean);
}

/** Whether a session's title, project or id hold every word (case-insensitive). */
function holdsEvery(words: readonly string[], title: string | undefined, project: string | undefined, id: string): boolean {
  const hay = `${title ?? ""}\n${project ?? ""}\n${id}`.toLowerCase();
  return words.every((w) => hay.includes(w));
}

/** Text from a session's summary (a file anyone with the state folder could edit) as one safe line. */
function oneLine(text: string): string {
  return sanitize(text, { newlines: "escape" });
}

/** Filtering and selection over the entries; `rows` is what the terminal shows. */
export class PickerModel {
  filter = "";
  private selected = 0;

  constructor(
    private readonly entries: readonly PickerEntry[],
    private readonly now: number,
  ) {}

  /** Entries whose title, project or id contain every word of the filter (case-insensitive). */
  matches(): PickerEntry[] {
    const words = filterWords(this.filter);
    if (words.length === 0) return [...this.entries];
    return this.entries.filter((e) => holdsEvery(words, e.title, e.project, e.id));
  }

  /** Applies a key: the chosen entry on Enter, null when the user gave up, undefined to go on. */
  key(k: Key): PickerEntry | null | undefined {
    const shown = this.matches();
    switch (k.kind) {
      case "text":
      case "paste":
        this.filter = (this.filter + k.text.replace(/\s+/g, " ")).slice(0, FILTER_MAX_CHARS);
        this.selected = 0;
        return undefined;
      case "backspace":
        this.filter = [...this.filter].slice(0, -1).join("");
        this.selected = 0;
        return undefined;
      case "up":
        this.selected = Math.max(0, this.selected - 1);
        return undefined;
      case "down":
        this.selected = Math.min(Math.max(0, shown.length - 1), this.selected + 1);
        return undefined;
      case "enter":
        return shown[this.selected] ?? undefined;
      case "escape":
        return null;
      case "ctrl":
        if (k.key === "c" || k.key === "d" || k.key === "g") return null;
        if (k.key === "u") {
          this.filter = "";
          this.selected = 0;
        } else if (k.key === "p") this.selected = Math.max(0, this.selected - 1);
        else if (k.key === "n") this.selected = Math.min(Math.max(0, shown.length - 1), this.selected + 1);
        return undefined;
      default:
        return undefined;
    }
  }

  /** The picker's lines at `width` columns: a header, the filter, then up to PICKER_ROWS entries. */
  lines(width: number): { text: string; selected: boolean }[] {
    const shown = this.matches();
    const first = Math.max(0, Math.min(this.selected - PICKER_ROWS + 1, shown.length - PICKER_ROWS));
    const out = [
      { text: truncateEnd(`Resume which session? ${shown.length} of ${this.entries.length} — type to filter, ↑/↓ to move, Enter to resume, Esc to give up`, width), selected: false },
      { text: truncateEnd(`> ${oneLine(this.filter)}`, width), selected: false },
    ];
    for (const [i, e] of shown.slice(first, first + PICKER_ROWS).entries()) {
      const title = truncateEnd(oneLine(e.title ?? "(untitled)"), 50);
      const project = truncateEnd(oneLine(e.project ?? "?"), 60);
      const mark = first + i === this.selected ? "›" : " ";
      out.push({ text: truncateEnd(`${mark} ${title}  ·  ${ageLabel(this.now - e.lastActive)}  ·  ${project}  ·  ${oneLine(e.id)}`, width), selected: first + i === this.selected });
    }
    if (shown.length === 0) out.push({ text: truncateEnd("  (no saved session matches)", width), selected: false });
    return out;
  }
}

/** Runs the picker on the terminal; the chosen entry, or undefined when the user gave up. */
export function pickSession(entries: readonly PickerEntry[], io: { input: NodeJS.ReadStream; output: NodeJS.WriteStream } = { input: process.stdin, output: process.stdout }): Promise<PickerEntry | undefined> {
  const model = new PickerModel(entries, Date.now());
  const decoder = new KeyDecoder();
  const { input, output } = io;
  let drawn = 0;
  const draw = () => {
    const width = Math.max(20, output.columns ?? 80);
    const lines = model.lines(width);
    // Back to the first line of the previous drawing, then draw over it and clear what is left.
    let out = drawn > 1 ? `\r\x1b[${drawn - 1}A` : "\r";
    out += lines.map((l) => `\x1b[2K${l.selected ? `\x1b[7m${l.text}\x1b[27m` : l.text}`).join("\r\n") + "\x1b[J";
    output.write(out);
    drawn = lines.length;
  };
  return new Promise((resolve) => {
    let escTimer: NodeJS.Timeout | undefined;
    const wasRaw = input.isRaw;
    const finish = (choice: PickerEntry | undefined) => {
      clearTimeout(escTimer);
      input.off("data", onData);
      input.setRawMode?.(wasRaw);
      input.pause();
      // Leave the screen as it was before the picker: clear its lines.
      output.write(`${drawn > 1 ? `\r\x1b[${drawn - 1}A` : "\r"}\x1b[J`);
      resolve(choice);
    };
    const apply = (keys: Key[]): boolean => {
      for (const k of keys) {
        const r = model.key(k);
        if (r === null) {
          finish(undefined);
          return true;
        }
        if (r !== undefined) {
          finish(r);
          return true;
        }
      }
      draw();
      return false;
    };
    const onData = (chunk: Buffer | string) => {
      clearTimeout(escTimer);
      if (apply(decoder.feed(typeof chunk === "string" ? chunk : chunk.toString("utf8")))) return;
      if (decoder.waiting) escTimer = setTimeout(() => apply(decoder.flush()), ESC_WAIT_MS);
    };
    input.setRawMode?.(true);
    input.on("data", onData);
    input.resume();
    draw();
  });
}

/** `:sessions [WORDS]` in the interactive UI. */
export class SessionList {
  /** The saved sessions of the state folder (set by the entry; none until then). */
  source: () => SavedSession[] = () => [];

  constructor(private readonly ui: Pick<UiContext, "note" | "sessionId">) {}

  /** The saved sessions, newest first, or those whose title, project or id hold every word. */
  list(filter: string | undefined): void {
    let rows: SavedSession[];
    try {
      rows = this.source();
    } catch (err) {
      return this.ui.note("error", `the saved sessions could not be listed: ${(err as Error).message}`);
    }
    const words = filterWords(filter ?? "");
    const shown = rows.filter((r) => holdsEvery(words, r.title, r.project_root, r.id));
    if (shown.length === 0) return this.ui.note("info", rows.length === 0 ? "no saved sessions" : `no saved session matches ${filter ?? ""}`);
    const now = Date.now();
    const lines = shown.slice(0, SESSIONS_SHOWN).map((r) => {
      const here = r.id === this.ui.sessionId() ? " (this one)" : r.running_pid !== undefined ? " (running)" : "";
      return `${r.title ?? "(untitled)"}  ·  ${ageLabel(now - r.last_active)}  ·  ${r.project_root ?? "?"}  ·  ${r.id}${here}`;
    });
    const more = shown.length > SESSIONS_SHOWN ? `\n… ${shown.length - SESSIONS_SHOWN} more (tau session list --all shows every one)` : "";
    this.ui.note("info", `saved sessions (tau resume ID continues one):\n${lines.join("\n")}${more}`);
  }
}
