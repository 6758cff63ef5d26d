// Tool rows: a header `name id status  args` (the id only when given) and an owned body (payload or
// inline diff).
//
// Identity (tool name + short call id) and lifecycle/result status are ONE essential set: a width
// that cannot show the whole set shows neither the header nor its body (an empty block), so a row
// never appears anonymous or without its success/failure status. Only the arguments summary is
// optional; it is truncated in the middle and shown only with at least ARGS_MIN_COLUMNS columns.
import { escapeLabel, sanitize } from "./sanitize.js";
import type { SafeText } from "./sanitize.js";
import type { Block, Span, StyledLine } from "./screen.js";
import { DEFAULT_THEME } from "./theme.js";
import type { Theme, ThemeKey } from "./theme.js";
import { columns, graphemes, truncateEnd, truncateMiddle, wrap } from "./width.js";

export const TOOL_STATUSES = ["running", "ok", "error", "cancelled"] as const;
export type ToolStatus = (typeof TOOL_STATUSES)[number];

/** Column bound of the escaped tool name inside the essential set. */
export const TOOL_NAME_MAX_COLUMNS = 32;
/** Columns of the short call id (the id's last columns). */
export const SHORT_CALL_ID_COLUMNS = 8;
/** Separator between the essential set and the arguments summary. */
export const ARGS_SEPARATOR = "  ";
/** Fewest columns the arguments summary is shown in (fewer would be only an ellipsis). */
export const ARGS_MIN_COLUMNS = 2;
/** Default bound on body lines taken from a diff before a "more lines" note. */
export const DIFF_MAX_LINES = 400;

export interface ToolRowInput {
  readonly toolName: string;
  /** Shown as its last columns when given (the interactive UI leaves it out). */
  readonly callId?: string;
  readonly status: ToolStatus;
  /** Shown after the status, in its style, as part of the essential set (a running call's elapsed time). */
  readonly detail?: string;
  /** A one-line summary of the call's arguments (untrusted). */
  readonly args?: string;
}

const STATUS_STYLE: Record<ToolStatus, ThemeKey> = {
  running: "toolRunning",
  ok: "toolOk",
  error: "toolError",
  cancelled: "toolCancelled",
};

function sp(text: string, style: ThemeKey, theme: Theme): Span {
  return { text: text as SafeText, style: theme.styles[style] };
}

/** The escaped short form of a call id: its last SHORT_CALL_ID_COLUMNS columns. */
export function shortCallId(callId: string): SafeText {
  const clusters = graphemes(escapeLabel(callId, { maxColumns: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER }));
  let out = "";
  let w = 0;
  for (let i = clusters.length - 1; i >= 0; i--) {
    const c = clusters[i] as string;
    const cw = columns(c);
    if (w + cw > SHORT_CALL_ID_COLUMNS) break;
    out = c + out;
    w += cw;
  }
  return out as SafeText;
}

/** The essential set's parts, and the columns they need together (with single-space separators). */
export function essentialSet(input: ToolRowInput): { name: SafeText; id: SafeText; status: SafeText; width: number } {
  const name = escapeLabel(input.toolName, { maxColumns: TOOL_NAME_MAX_COLUMNS });
  const id = input.callId === undefined ? ("" as SafeText) : shortCallId(input.callId);
  const status = (input.detail === undefined ? input.status : `${input.status} ${sanitize(input.detail, { newlines: "escape" })}`) as SafeText;
  const parts = [name, id, status].filter((p) => p !== "");
  const width = parts.reduce((n, p) => n + columns(p), 0) + parts.length - 1;
  return { name, id, status, width };
}

/**
 * The header line for `width` columns, or `undefined` when the essential set does not fit.
 * Arguments appear after ARGS_SEPARATOR when at least ARGS_MIN_COLUMNS columns remain.
 */
export function layoutToolHeader(input: ToolRowInput, width: number, theme: Theme = DEFAULT_THEME): StyledLine | undefined {
  const set = essentialSet(input);
  if (width < set.width) return undefined;
  const line: Span[] = [];
  const push = (text: SafeText, key: ThemeKey): void => {
    if (text === "") return;
    if (line.length > 0) line.push(sp(" ", "text", theme));
    line.push(sp(text, key, theme));
  };
  push(set.name, "toolName");
  push(set.id, "toolId");
  push(set.status, STATUS_STYLE[input.status]);
  const room = width - set.width - ARGS_SEPARATOR.length;
  if (input.args !== undefined && room >= ARGS_MIN_COLUMNS) {
    const args = truncateMiddle(sanitize(input.args, { newlines: "escape" }), room);
    if (args !== "") {
      line.push(sp(ARGS_SEPARATOR, "text", theme));
      line.push(sp(args, "toolArgs", theme));
    }
  }
  return line;
}

export interface DiffBodyOptions {
  /** `wrap` (default) continues long lines on the next rows; `truncate` cuts them with `…`. */
  readonly mode?: "wrap" | "truncate";
  /** Diff lines shown before a "more lines" note (default DIFF_MAX_LINES). */
  readonly maxLines?: number;
}

function diffStyle(line: string): ThemeKey {
  if (line.startsWith("+++ ") || line.startsWith("--- ") || line.startsWith("diff ") || line.startsWith("index ")) {
    return "diffMeta";
  }
  if (line.startsWith("@@")) return "diffHunk";
  if (line.startsWith("+")) return "diffAdded";
  if (line.startsWith("-")) return "diffRemoved";
  if (line.startsWith("\\")) return "diffMeta";
  return "diffContext";
}

/** Renders a unified diff as styled lines no wider than `width` (untrusted text is sanitized). */
export function renderDiffBody(diff: string, width: number, theme: Theme = DEFAULT_THEME, options: DiffBodyOptions = {}): StyledLine[] {
  if (width <= 0) return [];
  const maxLines = options.maxLines ?? DIFF_MAX_LINES;
  const raw = diff.split(/\r?\n/);
  if (raw.length > 0 && raw[raw.length - 1] === "") raw.pop();
  const out: StyledLine[] = [];
  const shown = raw.slice(0, maxLines);
  for (const line of shown) {
    const key = diffStyle(line);
    const safe = sanitize(line, { newlines: "escape" });
    if (options.mode === "truncate") {
      out.push([sp(truncateEnd(safe, width), key, theme)]);
    } else {
      for (const part of wrap(safe, width)) out.push([sp(part, key, theme)]);
    }
  }
  const hidden = raw.length - shown.length;
  if (hidden > 0) {
    out.push([sp(truncateEnd(`… ${hidden} more line${hidden === 1 ? "" : "s"}` as SafeText, width), "muted", theme)]);
  }
  return out;
}

/**
 * A whole tool row: the header, then the body (a unified diff, or plain payload text). When the
 * essential set does not fit, the result is empty: the body is never shown without its header.
 */
export function renderToolRow(
  input: ToolRowInput & { readonly diff?: string; readonly payload?: string },
  width: number,
  theme: Theme = DEFAULT_THEME,
  options: DiffBodyOptions = {},
): Block {
  const header = layoutToolHeader(input, width, theme);
  if (header === undefined) return [];
  const block: StyledLine[] = [header];
  if (input.diff !== undefined) block.push(...renderDiffBody(input.diff, width, theme, options));
  if (input.payload !== undefined) {
    const maxLines = options.maxLines ?? DIFF_MAX_LINES;
    const lines = wrap(sanitize(input.payload), width);
    for (const l of lines.slice(0, maxLines)) block.push([sp(l, "text", theme)]);
    const hidden = lines.length - Math.min(lines.length, maxLines);
    if (hidden > 0) {
      block.push([sp(truncateEnd(`… ${hidden} more line${hidden === 1 ? "" : "s"}` as SafeText, width), "muted", theme)]);
    }
  }
  return block;
}
