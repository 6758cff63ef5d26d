// Syntax highlighting of fenced code for the terminal: highlight.js (its core and one grammar per
// language, each loaded the first time a fence names it) scores the code; its HTML-escaped output
// becomes structured spans in theme styles. No escape byte can come from here: the text of every
// span goes through `sanitize`, and styles come from the theme.
import { createRequire } from "node:module";
import { TAB_WIDTH, sanitize, type SafeText } from "./sanitize.js";
import type { Span } from "./screen.js";
import type { Theme, ThemeKey } from "./theme.js";

/** Code longer than this is shown in one style: highlighting costs about its length. */
export const HIGHLIGHT_MAX_CHARS = 64 * 1024;

/** Names a fence may use for a language, beside the grammar's own file name. */
const ALIASES: Readonly<Record<string, string>> = {
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  ts: "typescript",
  tsx: "typescript",
  mts: "typescript",
  py: "python",
  rb: "ruby",
  rs: "rust",
  sh: "bash",
  shell: "bash",
  zsh: "bash",
  console: "shell",
  yml: "yaml",
  html: "xml",
  svg: "xml",
  md: "markdown",
  "c++": "cpp",
  hpp: "cpp",
  h: "c",
  cs: "csharp",
  kt: "kotlin",
  golang: "go",
  toml: "ini",
  dockerfile: "dockerfile",
  make: "makefile",
  patch: "diff",
  jsonc: "json",
  ps1: "powershell",
  tex: "latex",
};

/** Languages offered (grammar file names of highlight.js 11); a fence naming another shows plain. */
const LANGUAGES = new Set([
  "bash", "c", "cpp", "csharp", "css", "diff", "dockerfile", "elixir", "erlang", "go", "graphql", "haskell", "ini", "java", "javascript",
  "json", "kotlin", "latex", "less", "lua", "makefile", "markdown", "nginx", "ocaml", "perl", "php", "plaintext", "powershell", "protobuf",
  "python", "r", "ruby", "rust", "scala", "scss", "shell", "sql", "swift", "typescript", "xml", "yaml",
]);

type Hljs = typeof import("highlight.js").default;
let hljs: Hljs | undefined;
const requireHere = createRequire(import.meta.url);
const failed = new Set<string>();

/** The grammar file name for a fence's info string, or undefined when it names none offered. */
export function languageOf(info: string): string | undefined {
  const word = info.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  const name = ALIASES[word] ?? word;
  return LANGUAGES.has(name) ? name : undefined;
}

/** highlight.js with `name` registered, loaded on first use; undefined when it cannot load. */
function engine(name: string): Hljs | undefined {
  if (failed.has(name)) return undefined;
  try {
    hljs ??= requireHere("highlight.js/lib/core") as Hljs;
    if (hljs.getLanguage(name) === undefined) {
      const grammar = requireHere(`highlight.js/lib/languages/${name}`) as Parameters<Hljs["registerLanguage"]>[1] | { default: Parameters<Hljs["registerLanguage"]>[1] };
      hljs.registerLanguage(name, typeof grammar === "function" ? grammar : grammar.default);
    }
    return hljs;
  } catch {
    failed.add(name);
    return undefined;
  }
}

/** The theme slot of a highlight.js scope (`hljs-keyword`, `hljs-title function_`, …). */
function scopeKey(scope: string): ThemeKey | undefined {
  const s = scope.replace(/^hljs-/, "").split(/[ .]/)[0] ?? "";
  switch (s) {
    case "keyword":
    case "selector-tag":
    case "literal":
    case "section":
      return "synKeyword";
    case "string":
    case "regexp":
    case "char":
    case "template-tag":
    case "template-variable":
      return "synString";
    case "comment":
    case "quote":
    case "doc":
      return "synComment";
    case "number":
    case "symbol":
    case "bullet":
      return "synNumber";
    case "title":
    case "name":
    case "selector-id":
    case "selector-class":
      return "synTitle";
    case "type":
    case "built_in":
    case "class":
    case "attr":
    case "attribute":
      return "synType";
    case "meta":
    case "tag":
    case "punctuation":
      return "synMeta";
    case "addition":
      return "diffAdded";
    case "deletion":
      return "diffRemoved";
    default:
      return undefined;
  }
}

function expandTabs(line: string): string {
  if (!line.includes("\t")) return line;
  let out = "";
  for (const ch of line) out += ch === "\t" ? " ".repeat(TAB_WIDTH - (out.length % TAB_WIDTH)) : ch;
  return out;
}

const ENTITIES: Readonly<Record<string, string>> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#x27;": "'", "&#39;": "'" };
const unescapeHtml = (s: string): string => s.replace(/&(?:amp|lt|gt|quot|#x27|#39);/g, (e) => ENTITIES[e] ?? e);

/**
 * Code as styled lines, one per source line (a trailing newline adds none): highlighted when the
 * language is offered and the code is small enough, else in the `mdCode` style.
 */
export function highlightLines(code: string, info: string, theme: Theme): Span[][] {
  // Tabs become spaces first: a span's own tab stops would not be the line's.
  const text = (code.endsWith("\n") ? code.slice(0, -1) : code).split("\n").map(expandTabs).join("\n");
  const base = theme.styles.mdCode;
  const plain = (): Span[][] => text.split("\n").map((l) => (l === "" ? [] : [{ text: sanitize(l), style: base }]));
  const name = languageOf(info);
  if (name === undefined || name === "plaintext" || text.length > HIGHLIGHT_MAX_CHARS) return plain();
  const h = engine(name);
  if (h === undefined) return plain();
  let html: string;
  try {
    html = h.highlight(text, { language: name, ignoreIllegals: true }).value;
  } catch {
    return plain();
  }
  const lines: Span[][] = [[]];
  const scopes: (ThemeKey | undefined)[] = [];
  const token = /<span class="([^"]*)">|<\/span>|([^<]+)/g;
  for (let m = token.exec(html); m !== null; m = token.exec(html)) {
    if (m[1] !== undefined) scopes.push(scopeKey(m[1]));
    else if (m[2] === undefined) scopes.pop();
    else {
      let key: ThemeKey | undefined;
      for (let i = scopes.length - 1; i >= 0 && key === undefined; i--) key = scopes[i];
      const style = key === undefined ? theme.styles.text : theme.styles[key];
      const parts = unescapeHtml(m[2]).split("\n");
      parts.forEach((part, i) => {
        if (i > 0) lines.push([]);
        if (part !== "") (lines[lines.length - 1] as Span[]).push({ text: sanitize(part) as SafeText, style });
      });
    }
  }
  return lines;
}
