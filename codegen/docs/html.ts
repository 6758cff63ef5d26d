// HTML helpers for the documentation site: escaping, relative hrefs between pages, the page layout.
import { posix } from "node:path";

/** Escapes text for element content and double- or single-quoted attribute values. */
export function esc(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** A fragment id made only of characters that need no escaping in a URL or a selector-free lookup. */
export function fragment(prefix: string, name: string): string {
  return `${prefix}-${name.toLowerCase().replace(/[^a-z0-9._-]+/g, "-")}`;
}

/** The href from page `from` to page `to` (both site-relative, `/`-separated), with an optional fragment. */
export function href(from: string, to: string, frag?: string): string {
  const rel = posix.relative(posix.dirname(from), to) || posix.basename(to);
  return frag === undefined ? rel : `${rel}#${frag}`;
}

export function link(from: string, to: string, text: string, frag?: string, cls?: string): string {
  const c = cls === undefined ? "" : ` class="${esc(cls)}"`;
  return `<a${c} href="${esc(href(from, to, frag))}">${esc(text)}</a>`;
}

export function codeLink(from: string, to: string, text: string, frag?: string): string {
  return `<a href="${esc(href(from, to, frag))}"><code>${esc(text)}</code></a>`;
}

export interface NavItem {
  page: string;
  label: string;
}

export interface PageInput {
  path: string;
  title: string;
  /** Already-safe HTML for the page body. */
  body: string;
  nav: readonly NavItem[];
  /** The nav entry to mark as current (defaults to the page itself). */
  section?: string;
  /** Lets the page use the full window width (wide tables). */
  wide?: boolean;
}

export function layout(p: PageInput): string {
  const current = p.section ?? p.path;
  const nav = p.nav
    .map((n) => {
      const aria = n.page === current ? ' aria-current="page"' : "";
      return `<li><a href="${esc(href(p.path, n.page))}"${aria}>${esc(n.label)}</a></li>`;
    })
    .join("");
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(p.title)} · tau</title>`,
    '<link rel="icon" href="data:,">',
    `<link rel="stylesheet" href="${esc(href(p.path, "style.css"))}">`,
    "</head>",
    "<body>",
    `<header class="site"><a class="brand" href="${esc(href(p.path, "index.html"))}">τ tau</a><nav><ul>${nav}</ul></nav></header>`,
    `<main${p.wide ? ' class="wide"' : ""}>\n${p.body}\n</main>`,
    '<footer class="site">Generated from <code>records/</code>, <code>spec/</code> and <code>generated/</code> by <code>npm run docs</code>. Do not edit.</footer>',
    "</body>",
    "</html>",
    "",
  ].join("\n");
}
