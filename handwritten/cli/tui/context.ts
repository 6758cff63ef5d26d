// What the interactive UI's components share. The app (app.ts) composes them: each component owns
// its state, its rows and its keys; the app routes keys to the open dialog, delivered events to the
// components that care, and lends each one `UiContext`: the attached session, the focused agent,
// the transcript, and the ways to show something.
import type { SessionClient } from "../session-client.js";
import type { Editor } from "./editor.js";
import type { AgentView, Item, Transcript } from "./transcript.js";
import { sanitize, truncateMiddle, type StyledLine, type Theme } from "../ui/index.js";

/** How the UI left its session. */
/** `switch`: the session was handed off; the UI attaches to `handedOffTo` (SPEC-handoff). */
export type Exit = "quit" | "detach" | "quit-session" | "new" | "switch" | "lost";

export interface UiContext {
  /** The attached session's client; undefined before the first attach. */
  client(): SessionClient | undefined;
  sessionId(): string | undefined;
  /** The agent shown, whose transcript notices go to ("" until the session has one). */
  focus(): string;
  readonly transcript: Transcript;
  /** The focused agent's view (undefined while the session has none). */
  current(): AgentView | undefined;
  /** A local message (never sent anywhere): goes into the focused agent's transcript. */
  local(item: Item): void;
  note(level: string, text: string): void;
  /** A frame soon (streaming pace); keys are drawn at once by the app. */
  schedule(): void;
  /** A request id no other request of this process has: `r-KIND-PID-N`. */
  requestId(kind: string): string;
}

/**
 * A component shown above the editor while it waits for an answer. While it is open it takes the
 * single keys it offers; the app gives keys to the first open dialog only.
 */
export interface Dialog {
  readonly open: boolean;
  rows(width: number, theme: Theme): StyledLine[];
  /** A typed character while the dialog is open: true when it was one of its keys. */
  key(text: string, editor: Editor): boolean;
}

/** A dialog's lines as rows: each made terminal-safe and cut in the middle to `width`. */
export function dialogRows(lines: readonly string[], width: number, theme: Theme): StyledLine[] {
  return lines.map((l) => [{ text: truncateMiddle(sanitize(l, { newlines: "escape" }), width), style: theme.styles.status }]);
}
