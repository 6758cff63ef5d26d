// Key bindings of the interactive UI (SPEC-configuration, "Key bindings"): the actions a key can
// be bound to in cli.yaml `keys:`, their default keys, and the keys the prompt editor keeps for
// itself. One table: the UI, `:help`, the empty prompt's hint and the documentation site read it.
import type { KeyBindings } from "../../../generated/index.js";
import type { Key } from "./keys.js";

export type KeyAction = keyof KeyBindings & string;

export interface KeyActionSpec {
  readonly action: KeyAction;
  /** The key it has when cli.yaml does not bind it. */
  readonly default: string;
  readonly summary: string;
}

export const KEY_ACTIONS: readonly KeyActionSpec[] = [
  { action: "interrupt", default: "escape", summary: "interrupt the running turn (Ctrl-C keeps its meaning)" },
  { action: "expand_tool_output", default: "ctrl-o", summary: "show a tool's whole output, or its tail again; pressed again with no tool running, the next older tool's" },
  { action: "redraw", default: "ctrl-l", summary: "redraw the screen" },
  { action: "history_page", default: "alt-h", summary: "show a page of this agent's earlier history, further back each time (as :history)" },
  { action: "next_agent", default: "alt-n", summary: "switch to the next agent of the session" },
  { action: "previous_agent", default: "alt-p", summary: "switch to the previous agent of the session" },
  { action: "pick_agent", default: "alt-a", summary: "pick an agent from a list (fzf when it is on PATH, else the :agents tree)" },
];

/** Keys the prompt editor and the UI keep: never bindable. */
export const RESERVED_KEYS: ReadonlyArray<{ readonly key: string; readonly what: string }> = [
  { key: "enter", what: "sends the prompt" },
  { key: "alt-enter", what: "adds a line (so does Ctrl-J)" },
  { key: "tab", what: "completes a command or model name" },
  { key: "up", what: "moves up a line, or to the previous history entry" },
  { key: "down", what: "moves down a line, or to the next history entry" },
  { key: "left", what: "moves left (Ctrl-Left or Alt-B: a word)" },
  { key: "right", what: "moves right (Ctrl-Right or Alt-F: a word)" },
  { key: "home", what: "goes to the start of the line" },
  { key: "end", what: "goes to the end of the line" },
  { key: "backspace", what: "deletes the character before the cursor (so does Ctrl-H)" },
  { key: "ctrl-a", what: "goes to the start of the line" },
  { key: "ctrl-e", what: "goes to the end of the line" },
  { key: "ctrl-u", what: "deletes up to the start of the line" },
  { key: "ctrl-k", what: "deletes to the end of the line" },
  { key: "ctrl-w", what: "deletes the word before the cursor (so does Alt-Backspace)" },
  { key: "ctrl-j", what: "adds a line" },
  { key: "ctrl-r", what: "searches the prompt history (again: an older match)" },
  { key: "ctrl-g", what: "closes the history search" },
  { key: "ctrl-c", what: "clears the prompt, or cancels the running turn; twice on an empty prompt, quits" },
  { key: "ctrl-d", what: "quits on an empty prompt" },
  { key: "ctrl-h", what: "deletes the character before the cursor" },
  { key: "ctrl-i", what: "is Tab" },
  { key: "ctrl-m", what: "is Enter" },
  { key: "alt-b", what: "moves a word left" },
  { key: "alt-f", what: "moves a word right" },
];

/** How a key is written in cli.yaml: `escape`, `ctrl-LETTER` or `alt-LETTER` (a–z, lower case). */
const KEY_NAME = /^(escape|ctrl-[a-z]|alt-[a-z0-9])$/;

/** The bindable name of a key as typed, if it has one. */
export function keyName(key: Key): string | undefined {
  if (key.kind === "escape") return "escape";
  if (key.kind === "ctrl") return `ctrl-${key.key}`;
  if (key.kind === "alt") return `alt-${key.key}`;
  return undefined;
}

/** `Ctrl-O`, `Esc`, `Alt-H`, `Alt-Enter`: a key as help text names it. */
export function keyLabel(name: string): string {
  if (name === "escape") return "Esc";
  if (name === "none") return "(no key)";
  const cap = (w: string) => (w.length === 1 ? w.toUpperCase() : `${w.charAt(0).toUpperCase()}${w.slice(1)}`);
  return name.split("-").map(cap).join("-");
}

export interface Bindings {
  /** Action by key name. */
  readonly byKey: ReadonlyMap<string, KeyAction>;
  /** Key name by action (`none` when unbound). */
  readonly byAction: Readonly<Record<KeyAction, string>>;
}

/** A binding that cannot be used: the cli.yaml key path and why. */
export interface BindingProblem {
  readonly path: readonly string[];
  readonly message: string;
}

/**
 * The bindings cli.yaml's `keys:` asks for over the defaults, or the first problem: a key that is
 * not `escape`, `ctrl-LETTER`, `alt-LETTER` or `none`; one the editor keeps; one bound twice
 * (a default included: moving a default key to another action means binding its action elsewhere).
 */
export function resolveBindings(keys: KeyBindings | undefined): Bindings | BindingProblem {
  const byAction = {} as Record<KeyAction, string>;
  const byKey = new Map<string, KeyAction>();
  const configured = (keys ?? {}) as Record<string, string | undefined>;
  for (const spec of KEY_ACTIONS) {
    const raw = configured[spec.action];
    const name = raw === undefined ? spec.default : raw.trim().toLowerCase();
    const path = ["keys", spec.action];
    if (name !== "none" && !KEY_NAME.test(name)) {
      return { path, message: `cannot read ${JSON.stringify(raw)} as a key; write escape, ctrl-LETTER, alt-LETTER or none` };
    }
    const reserved = RESERVED_KEYS.find((r) => r.key === name);
    if (reserved !== undefined) return { path, message: `${name} is not free: it ${reserved.what}; choose another key` };
    byAction[spec.action] = name;
  }
  for (const spec of KEY_ACTIONS) {
    const name = byAction[spec.action];
    if (name === "none") continue;
    const earlier = byKey.get(name);
    if (earlier !== undefined) {
      // Reported at the line that made the collision: a configured key, never a default.
      if (configured[spec.action] !== undefined) {
        const note = configured[earlier] === undefined ? ` (its default; bind ${earlier} to another key or none first)` : "";
        return { path: ["keys", spec.action], message: `${name} is already bound to ${earlier}${note}` };
      }
      return { path: ["keys", earlier], message: `${name} is the default key of ${spec.action}; bind ${spec.action} to another key or none first` };
    }
    byKey.set(name, spec.action);
  }
  return { byKey, byAction };
}

export const DEFAULT_BINDINGS = resolveBindings(undefined) as Bindings;
