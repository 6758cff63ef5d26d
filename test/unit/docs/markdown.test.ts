// Markdown rendering for the site: raw HTML is escaped, record links point at record pages,
// repository paths without a page become text, heading ids are unique, links are checked.
import { describe, expect, it } from "vitest";
import { createMarkdown, newEnv, renderBlock } from "../../../codegen/docs/markdown.js";
import { checkLinks } from "../../../codegen/docs/links.js";
import { esc, href } from "../../../codegen/docs/html.js";

const records = new Map([
  ["SPEC-wire-protocol", "records/SPEC-wire-protocol.html"],
  ["ARCH-tau", "records/ARCH-tau.html"],
]);
const documents = new Map([["SECURITY.md", "security.html"]]);

describe("docs markdown", () => {
  it("escapes raw HTML and drops script URLs", () => {
    const md = createMarkdown();
    const env = newEnv("readme.html", records, documents);
    const html = renderBlock(md, '<script>alert(1)</script>\n\n[x](javascript:alert(1)) <img src=x onerror="y">', env);
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).not.toContain('href="javascript:');
    expect(html).toContain("&lt;script&gt;");
  });

  it("resolves record and document links relative to the page and records what it found", () => {
    const md = createMarkdown();
    const env = newEnv("records/ARCH-tau.html", records, documents);
    const html = renderBlock(
      md,
      "[SPEC-wire-protocol](SPEC-wire-protocol.md#frames), [policy](../SECURITY.md), [code](handwritten/store/), [gone](SPEC-gone.md), [web](https://example.org/)",
      env,
    );
    expect(html).toContain('<a href="SPEC-wire-protocol.html#frames">');
    expect(html).toContain('<a href="../security.html">');
    expect(html).toContain('<span class="repo-path" title="repository path: handwritten/store/">code</span>');
    expect(html).toContain('<a href="https://example.org/" rel="noopener noreferrer">');
    expect(env.linked).toEqual(["SPEC-wire-protocol"]);
    expect(env.missing).toEqual(["SPEC-gone"]);
  });

  it("gives headings unique ids that avoid the page's own ids", () => {
    const md = createMarkdown();
    const env = newEnv("index.html", records, documents, ["rules"]);
    const html = renderBlock(md, "## Rules\n\n## Rules\n\n## `code` & Things", env);
    expect(html).toContain('<h2 id="rules-2">');
    expect(html).toContain('<h2 id="rules-3">');
    expect(html).toContain('<h2 id="code-things">');
  });

  it("finds links to missing pages and anchors", () => {
    const files = new Map([
      ["index.html", `<a href="${esc(href("index.html", "records/A.html", "x"))}">a</a><a href="nope.html">n</a><a href="#here">h</a><p id="here"></p>`],
      ["records/A.html", '<h2 id="y"></h2><a href="../index.html#missing">i</a>'],
    ]);
    expect(checkLinks(files).map((p) => `${p.page}: ${p.detail}`)).toEqual([
      "index.html: link to records/A.html#x names no anchor on records/A.html",
      "index.html: link to nope.html names no page of the site",
      "records/A.html: link to ../index.html#missing names no anchor on index.html",
    ]);
  });
});
