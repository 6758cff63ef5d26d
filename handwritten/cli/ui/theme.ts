// Themes: named structured styles, loaded from JSON or YAML files and validated strictly. A theme
// can never carry escape bytes: colours are names, palette indexes or `#rrggbb`, and any string
// that looks like an escape sequence is rejected with the file and key named.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { extname } from "node:path";
import { escapeLabel } from "./sanitize.js";
import { STYLE_KEYS, isColor } from "./style.js";
import type { Color, Style } from "./style.js";

/** Every style slot a theme defines. */
export const THEME_KEYS = [
  "text",
  "muted",
  "accent",
  "prompt",
  "status",
  "error",
  "warning",
  "toolName",
  "toolId",
  "toolArgs",
  "toolRunning",
  "toolOk",
  "toolError",
  "toolCancelled",
  "diffAdded",
  "diffRemoved",
  "diffContext",
  "diffHunk",
  "diffMeta",
  "mdHeading",
  "mdStrong",
  "mdEmphasis",
  "mdCode",
  "mdLink",
  "mdQuote",
  "mdRule",
  "mdTable",
  "synKeyword",
  "synString",
  "synComment",
  "synNumber",
  "synTitle",
  "synType",
  "synMeta",
] as const;
export type ThemeKey = (typeof THEME_KEYS)[number];

export interface Theme {
  readonly name: string;
  readonly styles: Readonly<Record<ThemeKey, Style>>;
}

/** Largest theme file accepted. */
export const THEME_MAX_BYTES = 64 * 1024;
/** Longest theme name (characters). */
export const THEME_NAME_MAX_LENGTH = 64;

export const DEFAULT_THEME: Theme = Object.freeze({
  name: "default",
  styles: Object.freeze({
    text: {},
    muted: { dim: true },
    accent: { fg: "cyan" },
    prompt: { fg: "cyan", bold: true },
    status: { inverse: true },
    error: { fg: "red", bold: true },
    warning: { fg: "yellow" },
    toolName: { bold: true },
    toolId: { dim: true },
    toolArgs: { fg: "brightBlack" },
    toolRunning: { fg: "yellow" },
    toolOk: { fg: "green" },
    toolError: { fg: "red", bold: true },
    toolCancelled: { fg: "magenta" },
    diffAdded: { fg: "green" },
    diffRemoved: { fg: "red" },
    diffContext: {},
    diffHunk: { fg: "cyan" },
    diffMeta: { dim: true },
    mdHeading: { fg: "cyan", bold: true },
    mdStrong: { bold: true },
    mdEmphasis: { italic: true },
    mdCode: { fg: "yellow" },
    mdLink: { fg: "blue", underline: true },
    mdQuote: { fg: "brightBlack", italic: true },
    mdRule: { dim: true },
    mdTable: { dim: true },
    synKeyword: { fg: "magenta" },
    synString: { fg: "green" },
    synComment: { fg: "brightBlack", italic: true },
    synNumber: { fg: "yellow" },
    synTitle: { fg: "blue" },
    synType: { fg: "cyan" },
    synMeta: { fg: "brightBlack" },
  } satisfies Record<ThemeKey, Style>),
});

/** A theme file that could not be accepted; `key` is the dotted path of the offending value. */
export class ThemeError extends Error {
  constructor(
    readonly file: string,
    readonly key: string,
    readonly reason: string,
  ) {
    // File and key come from the user's file system and document: escape them for the terminal.
    const where = key === "" ? "" : `${escapeLabel(key, { maxBytes: 256, maxColumns: 80 })}: `;
    super(`theme ${escapeLabel(file, { maxBytes: 1024, maxColumns: 200 })}: ${where}${reason}`);
    this.name = "ThemeError";
  }
}

/** Escape bytes, and the spellings people use for them in config files. */
const ESCAPE_LIKE = /[\u0000-\u001f\u007f-\u009f]|\\(x1b|x9b|e\b|e\[|033|u001b|u009b|u\{1b\}|\[)|\^\[|\\e/i;

function describe(value: unknown): string {
  return typeof value === "string" ? "a string" : Array.isArray(value) ? "an array" : value === null ? "null" : typeof value;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function checkString(file: string, key: string, value: string): void {
  if (ESCAPE_LIKE.test(value)) throw new ThemeError(file, key, "looks like an escape sequence; themes take structured styles only");
}

function parseStyle(file: string, key: string, raw: unknown): Style {
  if (!isPlainObject(raw)) throw new ThemeError(file, key, `must be a style object, got ${describe(raw)}`);
  const style: { -readonly [K in keyof Style]: Style[K] } = {};
  for (const [k, v] of Object.entries(raw)) {
    const path = `${key}.${k}`;
    if (typeof v === "string") checkString(file, path, v);
    if (!(STYLE_KEYS as readonly string[]).includes(k)) {
      throw new ThemeError(file, path, `unknown style property (expected one of ${STYLE_KEYS.join(", ")})`);
    }
    if (k === "fg" || k === "bg") {
      if (!isColor(v)) {
        throw new ThemeError(file, path, "must be a colour name, a palette index 0-255 or #rrggbb");
      }
      style[k] = v as Color;
    } else {
      if (typeof v !== "boolean") throw new ThemeError(file, path, `must be true or false, got ${describe(v)}`);
      style[k as "bold" | "dim" | "italic" | "underline" | "inverse"] = v;
    }
  }
  return Object.freeze(style);
}

/**
 * Validates a parsed theme document `{name?, styles: {key: style}}`; missing style keys fall back to
 * the default theme. `file` names the source in error messages.
 */
export function themeFromObject(doc: unknown, file: string): Theme {
  if (!isPlainObject(doc)) throw new ThemeError(file, "", `must be an object, got ${describe(doc)}`);
  let name = file;
  const styles: Record<string, Style> = { ...DEFAULT_THEME.styles };
  for (const [k, v] of Object.entries(doc)) {
    if (typeof v === "string") checkString(file, k, v);
    if (k === "name") {
      if (typeof v !== "string" || v.length === 0 || v.length > THEME_NAME_MAX_LENGTH) {
        throw new ThemeError(file, k, `must be a string of 1 to ${THEME_NAME_MAX_LENGTH} characters`);
      }
      name = v;
    } else if (k === "styles") {
      if (!isPlainObject(v)) throw new ThemeError(file, k, `must be an object, got ${describe(v)}`);
      for (const [sk, sv] of Object.entries(v)) {
        if (!(THEME_KEYS as readonly string[]).includes(sk)) {
          throw new ThemeError(file, `styles.${sk}`, `unknown theme key (expected one of ${THEME_KEYS.join(", ")})`);
        }
        styles[sk] = parseStyle(file, `styles.${sk}`, sv);
      }
    } else {
      throw new ThemeError(file, k, "unknown key (expected name, styles)");
    }
  }
  return Object.freeze({ name, styles: Object.freeze(styles as Record<ThemeKey, Style>) });
}

/** The YAML parser, loaded on first use: the UI's first frame must not wait for it. */
function parseYaml(): typeof import("yaml").parse {
  return (createRequire(import.meta.url)("yaml") as typeof import("yaml")).parse;
}

/** Parses theme text; `format` defaults from the file's extension (`.json`, else YAML). */
export function parseTheme(text: string, file: string, format: "json" | "yaml" = extname(file) === ".json" ? "json" : "yaml"): Theme {
  if (Buffer.byteLength(text, "utf8") > THEME_MAX_BYTES) {
    throw new ThemeError(file, "", `is larger than ${THEME_MAX_BYTES} bytes`);
  }
  let doc: unknown;
  try {
    doc = format === "json" ? JSON.parse(text) : parseYaml()(text, { maxAliasCount: 0 });
  } catch (err) {
    throw new ThemeError(file, "", `is not valid ${format === "json" ? "JSON" : "YAML"} (${(err as Error).name})`);
  }
  return themeFromObject(doc, file);
}

/** Loads and validates a theme file (`.json`, `.yaml` or `.yml`). */
export function loadThemeFile(path: string): Theme {
  const ext = extname(path);
  if (ext !== ".json" && ext !== ".yaml" && ext !== ".yml") {
    throw new ThemeError(path, "", "must be a .json, .yaml or .yml file");
  }
  return parseTheme(readFileSync(path, "utf8"), path, ext === ".json" ? "json" : "yaml");
}
