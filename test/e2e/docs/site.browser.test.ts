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
  const types: Record<string, string> = { ".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".json": "application/json" };
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
  /** Files of the site that are not pages (the stylesheet, the run stream's schema document). */
  let assets = new Set<string>();
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
    assets = new Set(
      readdirSync(out, { recursive: true, encoding: "utf8" })
        .map((p) => p.split(sep).join("/"))
        .filter((p) => !p.endsWith(".html") && statSync(join(out, p)).isFile()),
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
          if (!assets.has(target)) broken.push(`${v.path} → ${l}: no such page`);
          continue;
        }
        const frag = decodeURIComponent(u.hash.replace(/^#/, ""));
        if (frag !== "" && !dest.ids.has(frag)) broken.push(`${v.path} → ${l}: no anchor #${frag}`);
      }
    }
    expect(checked).toBeGreaterThan(500);
    expect(broken).toEqual([]);
  });

  it("the run stream's page links its schema document, served whole as JSON Schema", async () => {
    expect(visits.get("run-stream.html")?.links.some((l) => new URL(l).pathname === "/run-stream.schema.json")).toBe(true);
    const res = await page.request.get(`${origin}/run-stream.schema.json`);
    expect(res.status()).toBe(200);
    expect(await res.json()).toMatchObject({ $schema: "https://json-schema.org/draft/2020-12/schema", $ref: "RunStreamLine.json" });
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

  it("[docs.site.user-pages] the front page leads with the user pages; getting started shows the README's commands and tau provider add", async () => {
    await page.goto(`${origin}/index.html`, { waitUntil: "load" });
    const sections = await page.$$eval("main section[id]", (els) => els.map((e) => e.id));
    expect(sections.slice(0, 2)).toEqual(["users", "contributors"]);
    const userLinks = await page.$$eval("#users ul.cards a", (as) => as.map((a) => a.getAttribute("href") ?? ""));
    expect(userLinks).toEqual(expect.arrayContaining(["start.html", "configuration.html", "commands.html", "providers.html", "sessions.html", "approvals.html", "troubleshooting.html", "security.html"]));
    for (const p of ["start.html", "configuration.html", "commands.html", "providers.html", "sessions.html", "approvals.html", "troubleshooting.html"]) expect(visits.has(p), p).toBe(true);
    // The approvals page words each choice as the dialog does (its own function builds the table).
    await page.goto(`${origin}/approvals.html`, { waitUntil: "load" });
    const choices = await page.$$eval("table.approvals code", (els) => els.map((e) => e.textContent ?? ""));
    expect(choices).toContain("[d] deny, and refuse this host for the rest of this session");
    expect(choices).toContain("[m] allow writing in that folder (all of your home folder) for the rest of this session (the model tries again itself)");
    await page.goto(`${origin}/start.html`, { waitUntil: "load" });
    const terminal = (await page.$$eval("main pre.terminal", (els) => els.map((e) => e.textContent ?? ""))).join("\n");
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    const commands = (/```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "").trim().split("\n");
    expect(commands.length).toBe(2);
    for (const c of commands) expect(terminal).toContain(`$ ${c}`);
    expect(terminal).toMatch(/\$ tau provider add \S+ --base-url https:\/\/\S+ --model \S+ --api-key-stdin/);
    expect(terminal).toContain("$ tau\n");
  });

  it("[docs.site.config-every-key] the configuration page has a row for every key of every configuration file, with its type and an example", async () => {
    // The keys, walked here from the generated schemas on their own (not by the generator's walker).
    const schemaDir = join(REPO_ROOT, "generated", "schemas");
    const all = new Map<string, Record<string, unknown>>(
      readdirSync(schemaDir).filter((f) => f.endsWith(".json")).map((f) => [f, JSON.parse(readFileSync(join(schemaDir, f), "utf8")) as Record<string, unknown>]),
    );
    type S = Record<string, unknown>;
    const expected: string[] = [];
    for (const rootSchema of all.values()) {
      const file = rootSchema["x-tau-config"];
      if (typeof file !== "string") continue;
      const defs = (rootSchema.$defs ?? {}) as Record<string, S>;
      const deref = (s: S): S => {
        const ref = s.$ref;
        if (typeof ref !== "string") return s;
        const t = ref.startsWith("#/$defs/") ? defs[ref.slice(8)] : all.get(ref);
        return t ? { ...deref(t), ...s, $ref: undefined } : s;
      };
      const named = (s: S) => Object.keys((s.properties ?? {}) as S).length > 0;
      const walk = (s: S, prefix: string) => {
        for (const [name, raw] of Object.entries((s.properties ?? {}) as Record<string, S>)) {
          const p = deref(raw);
          const path = `${prefix}${name}`;
          expected.push(`${file} ${path}`);
          if (named(p)) walk(p, `${path}.`);
          const values = p.unevaluatedProperties as S | undefined;
          if (p.type === "object" && !named(p) && values && !("not" in values) && named(deref(values))) walk(deref(values), `${path}.${{ providers: "NAME", model_info: "MODEL", roles: "ROLE" }[name] ?? "KEY"}.`);
          if (p.type === "array" && p.items && named(deref(p.items as S))) walk(deref(p.items as S), `${path}[].`);
        }
      };
      walk(rootSchema, "");
    }
    expect(expected.length).toBeGreaterThan(60);
    expect(expected).toContain("cli.yaml keys.interrupt");
    expect(expected).toContain("harness.yaml providers.NAME.base_url");
    await page.goto(`${origin}/configuration.html`, { waitUntil: "load" });
    const rows = await page.$$eval("tr[data-key]", (trs) =>
      trs.map((tr) => ({ key: `${tr.getAttribute("data-file")} ${tr.getAttribute("data-key")}`, type: tr.children[1]?.textContent ?? "", example: tr.querySelector("td.example pre")?.textContent ?? "" })),
    );
    expect(rows.map((r) => r.key).filter((k) => !k.startsWith("theme ")).sort()).toEqual([...expected].sort());
    for (const r of rows.filter((x) => !x.key.startsWith("theme "))) expect(r.type, r.key).not.toBe("");
    // Every value key shows an example naming its own last segment.
    for (const r of rows.filter((x) => expected.includes(x.key) && !x.type.startsWith("section") && !x.type.startsWith("map of name → entry") && !x.type.includes("entries (keys below)"))) {
      const last = r.key.split(/[ .]/).at(-1)?.replace("[]", "") ?? "";
      expect(r.example, r.key).toContain(`${last}:`);
    }
    // The theme's every style slot, and the keys page's every action, link back to here.
    expect(rows.filter((r) => r.key.startsWith("theme styles.")).length).toBeGreaterThan(20);
    await page.goto(`${origin}/commands.html`, { waitUntil: "load" });
    const actions = await page.$$eval("tr[data-action] a", (as) => as.map((a) => a.getAttribute("href") ?? ""));
    expect(actions.length).toBeGreaterThanOrEqual(5);
    for (const a of actions) expect(a).toMatch(/^configuration\.html#key-cli\.yaml-keys\./);
  });

  it("writes screenshots of the index and the matrix page to test-results/docs/", async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    for (const [path, name] of [
      ["index.html", "index.png"],
      ["matrix.html", "matrix.png"],
      ["start.html", "start.png"],
      ["configuration.html", "configuration.png"],
    ] as const) {
      await page.goto(`${origin}/${path}`, { waitUntil: "load" });
      const file = join(ARTIFACTS, name);
      await page.screenshot({ path: file, fullPage: true });
      expect(statSync(file).size).toBeGreaterThan(10_000);
    }
  });
});
