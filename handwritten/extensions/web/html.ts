// A fetched page as text for the model (SPEC-web, "web_fetch"; DECISION-web-html): HTML through
// linkedom (a DOM), @mozilla/readability (the article, without menus and scripts) and turndown
// (markdown); those load on the first HTML page only. Other text is passed on as it came; anything
// else is named, never shown.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { WEB_MAX_BODY_BYTES, WEB_MAX_HTML_CHARS } from "./limits.js";

/** An HTML page's readable part: its title and its article (or whole body) as markdown. */
type Readable = (html: string) => { title: string; markdown: string };
let converter: Readable | undefined;

const BUNDLED = /\/dist\/fast\/[^/]+\.cjs$/.test(import.meta.url);
type Libs = typeof import("./html-libs.js");

/**
 * The libraries: bundled, dist/fast/web-html.cjs beside this bundle (with a code cache, as the
 * sandbox runtime is loaded); from source, the packages themselves.
 */
function libs(): Libs {
  const load = createRequire(import.meta.url);
  if (BUNDLED) {
    const { loadBundle } = load("../../bin/bundle-loader.cjs") as { loadBundle: (file: string) => { exports: Libs; settled: () => void } };
    const b = loadBundle(fileURLToPath(new URL("./web-html.cjs", import.meta.url)));
    b.settled();
    return b.exports;
  }
  return {
    parseHTML: (load("linkedom") as Libs).parseHTML,
    Readability: (load("@mozilla/readability") as Libs).Readability,
    TurndownService: load("turndown") as Libs["TurndownService"],
  };
}

/** The converter, made on first use (the libraries load then). */
function readable(): Readable {
  if (converter !== undefined) return converter;
  const { parseHTML, Readability, TurndownService } = libs();
  const service = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
  service.remove(["script", "style", "noscript", "iframe", "object", "embed"]);
  converter = (html) => {
    const { document } = parseHTML(html);
    let article: { title?: string | null; content?: string | null } | null = null;
    try {
      // linkedom's document is the standard DOM Readability reads; their types are two libraries' own.
      article = new Readability(document as never, { charThreshold: 200 }).parse();
    } catch {
      article = null; // a page Readability cannot read: its whole body below
    }
    const content = article?.content ?? document.body?.innerHTML ?? "";
    return { title: (article?.title ?? document.title ?? "").trim(), markdown: service.turndown(content) };
  };
  return converter;
}

/** The charset of a Content-Type, when node can decode it; utf-8 otherwise. */
function decoderFor(contentType: string): TextDecoder {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8");
  } catch {
    return new TextDecoder("utf-8");
  }
}

export const isHtml = (contentType: string): boolean => /^\s*(text\/html|application\/xhtml\+xml)\b/i.test(contentType);
const isText = (contentType: string): boolean => contentType.trim() === "" || /^\s*(text\/|application\/(json|xml|[\w.+-]+\+(json|xml))|application\/(javascript|x-ndjson|yaml))/i.test(contentType);

/** Elements whose content is never page text, and comments: taken out before the HTML is parsed. */
const DROPPED = ["script", "style", "svg", "noscript", "template"] as const;

/**
 * `html` without DROPPED elements and comments, in one pass (indexOf only, so a page of unclosed
 * tags costs no more than any other): an element left open runs to the end and goes with it.
 */
export function withoutScripts(html: string): string {
  const lower = html.toLowerCase();
  const out: string[] = [];
  let at = 0;
  while (at < html.length) {
    const lt = lower.indexOf("<", at);
    if (lt === -1) break;
    let end: number | undefined;
    if (lower.startsWith("<!--", lt)) {
      const close = lower.indexOf("-->", lt + 4);
      end = close === -1 ? html.length : close + 3;
    } else {
      const name = DROPPED.find((n) => lower.startsWith(n, lt + 1) && !/[a-z0-9-]/.test(lower[lt + 1 + n.length] ?? ""));
      if (name !== undefined) {
        const close = lower.indexOf(`</${name}`, lt + 1);
        const gt = close === -1 ? -1 : lower.indexOf(">", close);
        end = gt === -1 ? html.length : gt + 1;
      }
    }
    if (end === undefined) {
      out.push(html.slice(at, lt + 1));
      at = lt + 1;
      continue;
    }
    out.push(html.slice(at, lt));
    at = end;
  }
  out.push(html.slice(at));
  return out.join("");
}

/** A page's text and title: HTML as markdown, other text as is, anything else a line naming it. */
export async function pageText(bytes: Buffer, contentType: string, base: URL): Promise<{ title?: string; text: string; htmlCut?: boolean }> {
  if (!isText(contentType)) return { text: `[${contentType.split(";")[0]?.trim().slice(0, 80)} content, ${bytes.length}${bytes.length >= WEB_MAX_BODY_BYTES ? "+" : ""} bytes, not shown]` };
  const text = decoderFor(contentType).decode(bytes);
  if (!isHtml(contentType) && !/^\s*<(!doctype html|html)\b/i.test(text.slice(0, 512))) return { text };
  const markup = withoutScripts(text);
  const htmlCut = markup.length > WEB_MAX_HTML_CHARS;
  const page = readable()(htmlCut ? markup.slice(0, WEB_MAX_HTML_CHARS) : markup);
  const markdown = absoluteLinks(page.markdown, base).trim();
  const title = page.title;
  return { ...(title !== "" ? { title } : {}), text: markdown, ...(htmlCut ? { htmlCut } : {}) };
}

/** Markdown links and images made absolute against the page's URL (readability keeps them as written). */
function absoluteLinks(markdown: string, base: URL): string {
  return markdown.replace(/\]\(([^)\s]+)(\s+"[^"]*")?\)/g, (whole, href: string, title: string | undefined) => {
    try {
      return `](${new URL(href, base).href}${title ?? ""})`;
    } catch {
      return whole;
    }
  });
}
