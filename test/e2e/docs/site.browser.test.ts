// Builds the documentation site into a temporary folder, serves it on loopback and crawls it from
// the index in headless Chromium driven by playwright-core (test/support/chromium.ts picks which
// Chromium): every page loads clean, every internal link resolves, the matrix lists every registered
// event, and the index and matrix pages are screenshotted into test-results/docs/.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { extname, join, normalize, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { writeSite } from "../../../codegen/docs/main.js";
import { EVENT_NAMES } from "../../../generated/events.js";
import { chromiumExecutable } from "../../support/chromium.js";
import { REPO_ROOT } from "../../support/paths.js";

const ARTIFACTS = join(REPO_ROOT, "test-results", "docs");
// Enough for Debian's chromium and for the packaged headless shell alike.
// @sparticuz/chromium's own `args` are for AWS Lambda (--single-process, --disable-web-security, …)
// and are not needed here.
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

interface Visit {
  path: string;
  status: number;
  problems: string[];
  ids: Set<string>;
  links: string[];
}

function serve(dir: string): Promise<{ server: Server; origin: string }> {
  const types: Record<string, string> = { ".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8" };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const rel = normalize(decodeURIComponent(url.pathname)).replace(/^[/\\]+/, "");
    const file = join(dir, rel === "" ? "index.html" : rel);
    if (!file.startsWith(dir + sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const addr = server.address();
      const port = typeof addr === "object" && addr !== null ? addr.port : 0;
      resolve({ server, origin: `http://127.0.0.1:${port}` });
    });
  });
}

describe("documentation site in headless Chromium", () => {
  let out = "";
  let site = new Map<string, string>();
  let server: Server | undefined;
  let origin = "";
  let browser: Browser | undefined;
  let page: Page;
  const visits = new Map<string, Visit>();

  async function visit(path: string): Promise<Visit> {
    const problems: string[] = [];
    const onConsole = (m: { type(): string; text(): string }) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`);
    };
    const onPageError = (e: Error) => problems.push(`page error: ${e.message}`);
    const onRequest = (r: { url(): string }) => {
      const u = r.url();
      if (!u.startsWith(`${origin}/`) && !u.startsWith("data:")) problems.push(`request outside the site: ${u}`);
    };
    const onFailed = (r: { url(): string; failure(): { errorText: string } | null }) =>
      problems.push(`request failed: ${r.url()} (${r.failure()?.errorText ?? "unknown"})`);
    const onResponse = (r: { url(): string; status(): number }) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`);
    };
    page.on("console", onConsole);
    page.on("pageerror", onPageError);
    page.on("request", onRequest);
    page.on("requestfailed", onFailed);
    page.on("response", onResponse);
    try {
      const response = await page.goto(`${origin}/${path}`, { waitUntil: "load" });
      const ids = new Set(await page.$$eval("[id]", (els) => els.map((e) => e.id)));
      // Browser-side expressions as strings: the project's TypeScript has no DOM library.
      const links = await page.evaluate<string[]>("[...document.querySelectorAll('a[href]')].map((a) => a.href)");
      const cssOk = await page.evaluate<boolean>("getComputedStyle(document.body).fontFamily.includes('system-ui')");
      if (!cssOk) problems.push("style.css did not apply");
      return { path, status: response?.status() ?? 0, problems, ids, links };
    } finally {
      page.off("console", onConsole);
      page.off("pageerror", onPageError);
      page.off("request", onRequest);
      page.off("requestfailed", onFailed);
      page.off("response", onResponse);
    }
  }

  beforeAll(async () => {
    const executablePath = await chromiumExecutable();
    out = mkdtempSync(join(tmpdir(), "tau-docs-e2e-"));
    await writeSite(REPO_ROOT, out);
    site = new Map(
      readdirSync(out, { recursive: true, encoding: "utf8" })
        .map((p) => p.split(sep).join("/"))
        .filter((p) => p.endsWith(".html"))
        .sort()
        .map((p) => [p, p]),
    );
    ({ server, origin } = await serve(out));
    browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
    page = await context.newPage();
    // Crawl from the index, following every internal link, so every page must also be reachable.
    const queue = ["index.html"];
    while (queue.length > 0) {
      const path = queue.shift() ?? "";
      if (visits.has(path) || !site.has(path)) continue;
      const v = await visit(path);
      visits.set(path, v);
      for (const l of v.links) {
        const u = new URL(l);
        if (u.origin !== origin) continue;
        const target = u.pathname.replace(/^\//, "");
        if (site.has(target) && !visits.has(target)) queue.push(target);
      }
    }
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it("[docs.site.pages-load-clean] every page loads with no console errors and no failed or outside requests", () => {
    expect(site.size).toBeGreaterThan(10);
    expect([...visits.keys()].sort(), "every page is reachable from the index").toEqual([...site.keys()]);
    const bad = [...visits.values()].flatMap((v) => [
      ...(v.status === 200 ? [] : [`${v.path}: HTTP ${v.status}`]),
      ...v.problems.map((p) => `${v.path}: ${p}`),
    ]);
    expect(bad).toEqual([]);
  });

  it("[docs.site.links-resolve] every internal link names an existing page and, with a fragment, an anchor on it", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const v of visits.values()) {
      for (const l of v.links) {
        const u = new URL(l);
        if (u.origin !== origin) {
          expect(u.protocol === "http:" || u.protocol === "https:" || u.protocol === "mailto:", `${v.path}: ${l}`).toBe(true);
          continue;
        }
        checked++;
        const target = u.pathname.replace(/^\//, "");
        const dest = visits.get(target);
        if (!dest) {
          broken.push(`${v.path} → ${l}: no such page`);
          continue;
        }
        const frag = decodeURIComponent(u.hash.replace(/^#/, ""));
        if (frag !== "" && !dest.ids.has(frag)) broken.push(`${v.path} → ${l}: no anchor #${frag}`);
      }
    }
    expect(checked).toBeGreaterThan(500);
    expect(broken).toEqual([]);
  });

  it("[docs.site.matrix-lists-every-event] the authority matrix has one row per registered event", async () => {
    await page.goto(`${origin}/matrix.html`, { waitUntil: "load" });
    const rows = await page.$$eval("#authority-matrix tbody tr[data-event]", (trs) =>
      trs.map((tr) => ({ event: tr.getAttribute("data-event") ?? "", shown: tr.querySelector("th")?.textContent?.trim() ?? "" })),
    );
    expect(rows.map((r) => r.event).sort()).toEqual([...EVENT_NAMES].sort());
    for (const r of rows) expect(r.shown).toBe(r.event);
    // Every row says something about who may publish it.
    const admitted = await page.$$eval("#authority-matrix tbody tr[data-event]", (trs) =>
      trs.filter((tr) => tr.querySelector("td.admit, td.cap") === null).map((tr) => tr.getAttribute("data-event")),
    );
    expect(admitted).toEqual([]);
  });

  it("writes screenshots of the index and the matrix page to test-results/docs/", async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    for (const [path, name] of [
      ["index.html", "index.png"],
      ["matrix.html", "matrix.png"],
    ] as const) {
      await page.goto(`${origin}/${path}`, { waitUntil: "load" });
      const file = join(ARTIFACTS, name);
      await page.screenshot({ path: file, fullPage: true });
      expect(statSync(file).size).toBeGreaterThan(10_000);
    }
  });
});
