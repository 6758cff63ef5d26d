// Markdown → HTML with markdown-it (raw HTML disabled), heading anchors, and links rewritten for
// the site: record links to record pages, README/SECURITY to their pages; repository paths that have
// no page become plain text so the site never carries a dead link.
import MarkdownIt from "markdown-it";
import type Token from "markdown-it/lib/token.mjs";
import type StateCore from "markdown-it/lib/rules_core/state_core.mjs";
import { href } from "./html.js";

export const RECORD_ID = /^(ARCH|SPEC|GATE|DECISION|REQ)-[a-z0-9]+(-[a-z0-9]+)*$/;

export interface RenderEnv {
  /** The site path of the page being rendered (for relative hrefs). */
  page: string;
  /** Known record ids → their site path. */
  records: ReadonlyMap<string, string>;
  /** Root documents (README.md, SECURITY.md) present → their site path. */
  documents: ReadonlyMap<string, string>;
  /** Ids already used on the page; heading ids are made unique against it. */
  usedIds: Set<string>;
  /** Record ids linked from the text that do not exist. */
  missing: string[];
  /** Record ids linked from the text that exist. */
  linked: string[];
}

export function slug(text: string): string {
  const s = text
    .toLowerCase()
    .replace(/[`*_~]/g, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return s === "" ? "section" : s;
}

function uniqueId(base: string, used: Set<string>): string {
  let id = base;
  for (let n = 2; used.has(id); n++) id = `${base}-${n}`;
  used.add(id);
  return id;
}

/** Where a Markdown link target points on the site, or undefined when it has no page here. */
function resolveTarget(target: string, env: RenderEnv): { page: string; frag?: string } | "external" | "missing" | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return "external";
  if (target.startsWith("#")) return { page: env.page, frag: target.slice(1) };
  const hash = target.indexOf("#");
  const path = hash === -1 ? target : target.slice(0, hash);
  const frag = hash === -1 ? undefined : target.slice(hash + 1);
  const base = path.split("/").pop() ?? "";
  if (base.endsWith(".md")) {
    const stem = base.slice(0, -3);
    if (RECORD_ID.test(stem)) {
      const page = env.records.get(stem);
      if (page === undefined) {
        env.missing.push(stem);
        return "missing";
      }
      env.linked.push(stem);
      return frag === undefined ? { page } : { page, frag };
    }
    const doc = env.documents.get(base);
    if (doc !== undefined) return frag === undefined ? { page: doc } : { page: doc, frag };
  }
  return undefined;
}

function toSpan(open: Token, close: Token | undefined, title: string): void {
  open.tag = "span";
  open.attrs = [
    ["class", "repo-path"],
    ["title", title],
  ];
  if (close) close.tag = "span";
}

function rewriteLinks(state: StateCore): void {
  const env = state.env as RenderEnv;
  for (const block of state.tokens) {
    if (block.type !== "inline" || !block.children) continue;
    const children = block.children;
    for (let i = 0; i < children.length; i++) {
      const tok = children[i];
      if (!tok || tok.type !== "link_open") continue;
      let depth = 0;
      let close: Token | undefined;
      for (let j = i + 1; j < children.length; j++) {
        const c = children[j];
        if (!c) continue;
        if (c.type === "link_open") depth++;
        if (c.type === "link_close") {
          if (depth === 0) {
            close = c;
            break;
          }
          depth--;
        }
      }
      const target = tok.attrGet("href") ?? "";
      const resolved = resolveTarget(target, env);
      if (resolved === "external") {
        tok.attrSet("rel", "noopener noreferrer");
      } else if (resolved === "missing") {
        toSpan(tok, close, `missing record: ${target}`);
      } else if (resolved === undefined) {
        toSpan(tok, close, `repository path: ${target}`);
      } else {
        tok.attrSet("href", href(env.page, resolved.page, resolved.frag));
      }
    }
  }
}

function headingIds(state: StateCore): void {
  const env = state.env as RenderEnv;
  const tokens = state.tokens;
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    if (!tok || tok.type !== "heading_open") continue;
    const inline = tokens[i + 1];
    const text = inline?.children?.map((c) => (c.type === "text" || c.type === "code_inline" ? c.content : "")).join("") ?? "";
    tok.attrSet("id", uniqueId(slug(text), env.usedIds));
  }
}

function tables(state: StateCore): void {
  for (const tok of state.tokens) {
    if (tok.type === "table_open") tok.attrJoin("class", "md-table");
  }
}

export function createMarkdown(): MarkdownIt {
  const md = new MarkdownIt("default", { html: false, linkify: false, typographer: false });
  md.core.ruler.push("tau_links", rewriteLinks);
  md.core.ruler.push("tau_heading_ids", headingIds);
  md.core.ruler.push("tau_tables", tables);
  return md;
}

export function renderBlock(md: MarkdownIt, src: string, env: RenderEnv): string {
  return md.render(src, env);
}

export function renderInline(md: MarkdownIt, src: string, env: RenderEnv): string {
  return md.renderInline(src, env);
}

export function newEnv(page: string, records: ReadonlyMap<string, string>, documents: ReadonlyMap<string, string>, reserved: Iterable<string> = []): RenderEnv {
  return { page, records, documents, usedIds: new Set(reserved), missing: [], linked: [] };
}
