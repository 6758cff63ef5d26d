// Terminal-UI primitives: sanitizing untrusted text, grapheme widths and layouts, excerpts of long
// text (its first or last rows, wrapping only those), a cell grid with a diffing renderer (the only
// writer of escape sequences), themes, tool rows, the bounded socket-to-renderer queue and progress
// diagnostics, and markdown answers (parsed by markdown-it, code highlighted by highlight.js, both
// loaded on first use). See SPEC-terminal-presentation.
export { CUT_SHORT, cutShortNotice, extensionNoticeText } from "./notices.js";
export { sanitize, isSafeText, escapeLabel, agentLabel, TAB_WIDTH, LABEL_MAX_BYTES, LABEL_MAX_COLUMNS, AGENT_NAME_MAX_COLUMNS } from "./sanitize.js";
export type { SafeText, SanitizeOptions, LabelBounds } from "./sanitize.js";
export { ELLIPSIS, graphemes, clusterWidth, isUncertainWidth, columns, padEnd, truncateMiddle, truncateEnd, wrap } from "./width.js";
export { EXCERPT_EXACT_TAIL_UNITS, EXCERPT_UNITS_PER_CELL, countLineBreaks, endWithoutTrailingNewlines, graphemeCutAfter, graphemeCutBefore, wrapHead, wrapTail } from "./excerpt.js";
export type { HeadExcerpt, TailExcerpt } from "./excerpt.js";
export { NAMED_COLORS, DEFAULT_STYLE, isColor, sgrParams, styleKey, sameStyle } from "./style.js";
export type { NamedColor, Color, Style } from "./style.js";
export { Grid, Screen, render, MAX_GRID_DIMENSION, ENTER_SEQUENCE, LEAVE_SEQUENCE } from "./screen.js";
export type { Cell, Span, StyledLine, Block, CursorPosition, RenderOptions } from "./screen.js";
export { THEME_KEYS, DEFAULT_THEME, ThemeError, THEME_MAX_BYTES, THEME_NAME_MAX_LENGTH, themeFromObject, parseTheme, loadThemeFile } from "./theme.js";
export type { Theme, ThemeKey } from "./theme.js";
export {
  TOOL_STATUSES,
  TOOL_NAME_MAX_COLUMNS,
  SHORT_CALL_ID_COLUMNS,
  ARGS_SEPARATOR,
  ARGS_MIN_COLUMNS,
  DIFF_MAX_LINES,
  shortCallId,
  essentialSet,
  layoutToolHeader,
  renderDiffBody,
  renderToolRow,
} from "./tool-row.js";
export type { ToolStatus, ToolRowInput, DiffBodyOptions } from "./tool-row.js";
export { RenderQueue, RENDER_QUEUE_MAX_ITEMS, RENDER_QUEUE_MAX_BYTES } from "./queue.js";
export type { OfferResult, QueueEntry, RenderQueueOptions } from "./queue.js";
export {
  Diagnostics,
  DiagnosticValueError,
  diagnosticId,
  diagnosticName,
  FRONTEND_COMPONENTS,
  SLOW_STAGE_MS,
  SLOW_STAGE_WARNING_INTERVAL_MS,
  DIAGNOSTIC_TOKEN_MAX_LENGTH,
  DIAGNOSTIC_RECORDS_HOLD_NO_BODIES,
} from "./diagnostics.js";
export type { DiagnosticId, DiagnosticName, DiagnosticRecord, DiagnosticsOptions, FrontendComponent, StageTimer } from "./diagnostics.js";
export { MarkdownStream, preloadMarkdown, renderMarkdown, wrapPieces, fitColumns, MARKDOWN_MAX_CHUNK_CHARS, OPEN_CHUNK_HIGHLIGHT_CHARS, TABLE_MIN_COLUMN } from "./markdown.js";
export { highlightLines, languageOf, HIGHLIGHT_MAX_CHARS } from "./highlight.js";
