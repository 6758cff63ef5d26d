// The documentation site: records, authority matrix, event catalog, wire messages, shared models,
// gates, CLI help, README and SECURITY, built from the same sources as generated/. Pure function of
// the repository: sorted everywhere, no timestamps, no absolute paths.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type MarkdownIt from "markdown-it";
import { Problems } from "../errors.js";
import { compileSpec, type JsonSchema } from "../typespec.js";
import { loadRecords, RECORD_KINDS, type ParsedRecord } from "../records.js";
import { buildTables, cmp, type EventEntry, type MessageEntry, type Tables } from "../tables.js";
import { CONCRETE_CLASSES, expectedAdmit } from "../emit.js";
import { codeLink, esc, fragment, href, layout, link, type NavItem } from "./html.js";
import { createMarkdown, newEnv, renderBlock, renderInline, type RenderEnv } from "./markdown.js";
import { defsOf, fieldRows, fieldTable, hasFields, typeHtml, type TypeContext } from "./schema.js";
import { readCommands, renderCli } from "./cli.js";
import { renderErrors, type ErrorsInput } from "./errors.js";
import { RUN_STREAM_PAGE, RUN_STREAM_SCHEMA_FILE, renderRunStream, runStreamSchema } from "./run-stream.js";
import { scanTestLocations, SCANNED_DIRS } from "./tests.js";
import { checkLinks } from "./links.js";
import { STYLE } from "./style.js";
import { GUIDE_PAGES, GUIDE_STYLE, approvalsPage, commandsPage, configurationPage, editorsPage, handoffPage, mcpPage, providersPage, sessionsPage, startPage, swarmPage, troubleshootingPage, webPage, type GuideContext, type GuideInput } from "./guide.js";
import { slackPage } from "./slack-page.js";
import { gmailPage } from "./gmail-page.js";
import { extensionsPage } from "./extensions-page.js";

export interface SiteInput {
  root: string;
  /** The oclif command map whose help the CLI page shows. */
  commands: Record<string, unknown>;
  /** The CLI's error codes and exit statuses, which the errors page lists. */
  errors: ErrorsInput;
  /** The interactive UI's command, key and theme tables, which the user pages list. */
  guide: GuideInput;
}

const DOCUMENTS = [
  { file: "README.md", page: "readme.html", label: "README" },
  { file: "SECURITY.md", page: "security.html", label: "Security" },
] as const;

const RESERVED_IDS = ["page-meta", "page-backlinks", "page-owned", "page-enforcement", "page-body"];

const PERSISTENCE_TEXT: Record<string, string> = {
  agent: "agent journal",
  session: "session journal",
  restore: "restore stream",
  transient: "live only",
  snapshot: "current-state snapshot",
  directed: "to the requester only",
};

const DIRECTION_TEXT: Record<string, string> = {
  to_harness: "Peer → harness",
  from_harness: "Harness → peer",
  both: "Both directions",
};

interface Ctx {
  root: string;
  md: MarkdownIt;
  tables: Tables;
  schemas: Map<string, JsonSchema>;
  recordPages: Map<string, string>;
  recordsById: Map<string, ParsedRecord>;
  documents: Map<string, { page: string; label: string; text: string }>;
  documentPages: Map<string, string>;
  eventBySchema: Map<string, EventEntry>;
  messageBySchema: Map<string, MessageEntry>;
  nav: NavItem[];
}

export function recordPage(id: string): string {
  return `records/${id}.html`;
}

function schemaIdOf(model: string): string {
  return `${model}.json`;
}

function envFor(ctx: Ctx, page: string): RenderEnv {
  return newEnv(page, ctx.recordPages, ctx.documentPages, RESERVED_IDS);
}

function refLinkFor(ctx: Ctx): TypeContext["refLink"] {
  return (id, from) => {
    const ev = ctx.eventBySchema.get(id);
    const name = id.replace(/\.json$/, "");
    if (ev) return { href: href(from, "events.html", fragment("event", ev.name)), name: ev.name };
    const msg = ctx.messageBySchema.get(id);
    if (msg) return { href: href(from, "messages.html", fragment("message", msg.name)), name: msg.name };
    if (ctx.schemas.has(id)) return { href: href(from, "models.html", fragment("model", name)), name };
    return undefined;
  };
}

function typeCtx(ctx: Ctx, page: string, schema: JsonSchema): TypeContext {
  return { page, refLink: refLinkFor(ctx), defs: defsOf(schema) };
}

function recordLink(ctx: Ctx, from: string, id: string): string {
  const r = ctx.recordsById.get(id);
  const title = r ? ` <span class="muted">${esc(r.title)}</span>` : "";
  return `${codeLink(from, recordPage(id), id)}${title}`;
}

function badge(status: string): string {
  return `<span class="badge status-${esc(status)}">${esc(status)}</span>`;
}

/** All `$ref`s to other documents that a schema contains, sorted. */
function refsOf(s: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(s)) for (const v of s) refsOf(v, out);
  else if (typeof s === "object" && s !== null) {
    for (const [k, v] of Object.entries(s)) {
      if (k === "$ref" && typeof v === "string" && !v.startsWith("#")) out.add(v);
      else refsOf(v, out);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Pages

function indexPage(ctx: Ctx): string {
  const page = "index.html";
  const { events, messages, records } = ctx.tables;
  const gates = records.filter((r) => r.kind === "GATE");
  const enforced = gates.filter((g) => g.status === "enforced").length;
  const users: Array<[string, string, string]> = [
    [GUIDE_PAGES.start, "Getting started", "Set up, run a first prompt, connect a model."],
    [GUIDE_PAGES.configuration, "Configuration", "Every key of harness.yaml, cli.yaml, sandbox.yaml, provider profiles and themes: type, default, example."],
    [GUIDE_PAGES.commands, "Commands and keys", "The colon commands of the interactive UI and its keys, and how to rebind them."],
    [GUIDE_PAGES.providers, "Providers", "Connect OpenAI-compatible endpoints and choose models."],
    [GUIDE_PAGES.sessions, "Sessions", "Detach, attach, resume; list and delete saved sessions."],
    [GUIDE_PAGES.approvals, "Approvals", "The sandbox's requests: each key, what it allows and for how long."],
    [GUIDE_PAGES.troubleshooting, "Troubleshooting", "What usually goes wrong in the first hour, what tau says, and the fix."],
    [GUIDE_PAGES.editors, "Editors", "Use tau from Zed, JetBrains IDEs, Neovim or Emacs over the Agent Client Protocol."],
    [GUIDE_PAGES.mcp, "MCP servers", "Give the model the tools of MCP servers, moved over from Claude Code, Cursor, Codex or opencode."],
    [GUIDE_PAGES.slack, "Slack", "Set up a Slack app so people can talk to a tau agent from Slack."],
    [GUIDE_PAGES.web, "Web search and fetch", "Let the model search the web (Exa, Parallel) and read pages, framed as untrusted and within the sandbox's network policy."],
    [GUIDE_PAGES.gmail, "Gmail", "Let the model search, read and draft your mail, and send a draft only when you allow it; sign in from the terminal."],
    [GUIDE_PAGES.swarm, "Swarm", "Run tau workers on several machines and coordinate them over Iroh: a swarm of three workers."],
    [GUIDE_PAGES.handoff, "Handoff", "Continue a full session in a fresh one that starts from a dossier the model wrote, keeping what you typed meanwhile."],
    [GUIDE_PAGES.extensions, "Writing an extension", "Give the model tools, and tell new agents what they should know: prompt fragments, per-agent context and readiness, AGENTS.md files and skills."],
    ["cli.html", "CLI reference", "Every tau command, its flags and examples."],
    ["errors.html", "Errors", "Every error code the CLI reports, its exit status and what it means."],
  ];
  const security = ctx.documents.get("SECURITY.md");
  if (security) users.push([security.page, "Security", "What tau trusts, what its sandbox protects and what it does not; how to report a problem."]);
  const contributors: Array<[string, string, string]> = [
    ["matrix.html", "Authority matrix", `${events.length} events × ${CONCRETE_CLASSES.length} publisher classes: who may publish, where it is stored, what follows.`],
    ["events.html", "Event catalog", `${events.length} event payloads with every field, type and requirement.`],
    ["messages.html", "Wire messages", `${messages.length} protocol messages and their payloads, by direction.`],
    ["models.html", "Shared models", "Types the events and messages share, journal records and configuration files."],
    ["gates.html", "Gates", `${gates.length} invariants (${enforced} enforced) and the tests that enforce them.`],
  ];
  const readme = ctx.documents.get("README.md");
  if (readme) contributors.push([readme.page, "README", "What tau is, how to build, test and benchmark it."]);
  const cards = (list: Array<[string, string, string]>) => [
    '<ul class="cards">',
    ...list.map(([p, title, text]) => `<li><a href="${esc(href(page, p))}"><strong>${esc(title)}</strong><span>${esc(text)}</span></a></li>`),
    "</ul>",
  ];
  const parts = [
    "<h1>tau</h1>",
    '<p class="lead">tau is a coding agent for your terminal: fast to start, it works in the folder you start it in, runs the model\'s commands in a sandbox, and keeps every session so you can detach, attach and resume. This site is generated from the same sources as its code, so it says what tau does.</p>',
    '<section class="users" id="users"><h2>Using tau</h2>',
    ...cards(users),
    "</section>",
    '<section class="contributors" id="contributors"><h2>Contracts, for contributors and extension authors</h2>',
    "<p>The records in <code>records/</code>, the TypeSpec contract in <code>spec/</code> and the tables codegen derives from them.</p>",
    ...cards(contributors),
    "</section>",
    '<h2 id="records">Records</h2>',
    "<p>One rule or one component per record. Links between records are resolved; every record page lists the records that link to it.</p>",
  ];
  for (const kind of RECORD_KINDS) {
    const list = records.filter((r) => r.kind === kind);
    if (list.length === 0) continue;
    parts.push(`<h3 id="${esc(fragment("kind", kind))}">${esc(kind)} <span class="muted">(${list.length})</span></h3>`);
    parts.push('<table class="records"><thead><tr><th>record</th><th>title</th><th>status</th></tr></thead><tbody>');
    for (const r of list) {
      parts.push(`<tr><td>${codeLink(page, recordPage(r.id), r.id)}</td><td>${esc(r.title)}</td><td>${badge(r.status)}</td></tr>`);
    }
    parts.push("</tbody></table>");
  }
  return layout({ path: page, title: "Overview", body: parts.join("\n"), nav: ctx.nav });
}

function recordPageHtml(ctx: Ctx, r: ParsedRecord, backlinks: Map<string, Set<string>>): string {
  const page = recordPage(r.id);
  const env = envFor(ctx, page);
  const body = r.body.replace(/^\s*# [^\n]*\n/, "");
  const links = r.links.length === 0 ? '<span class="muted">none</span>' : `<ul class="inline">${r.links.map((l) => `<li>${codeLink(page, recordPage(l), l)}</li>`).join("")}</ul>`;
  const parts = [
    `<p class="crumbs">${link(page, "index.html", "Records", fragment("kind", r.kind))} › ${esc(r.kind)}</p>`,
    `<h1>${esc(r.title)}</h1>`,
    '<dl class="meta" id="page-meta">',
    `<dt>id</dt><dd><code>${esc(r.id)}</code></dd>`,
    `<dt>kind</dt><dd>${esc(r.kind)}</dd>`,
    `<dt>status</dt><dd>${badge(r.status)}</dd>`,
    `<dt>links</dt><dd>${links}</dd>`,
    `<dt>source</dt><dd><code>${esc(r.file)}</code></dd>`,
    "</dl>",
    `<article class="record" id="page-body">\n${renderBlock(ctx.md, body, env)}</article>`,
  ];
  if (r.authority.length > 0) {
    parts.push('<section id="page-owned"><h2>Authority rows owned here</h2><ul class="inline">');
    for (const row of [...r.authority].sort((a, b) => cmp(a.event, b.event))) {
      parts.push(`<li>${codeLink(page, "matrix.html", row.event, fragment("row", row.event))}</li>`);
    }
    parts.push("</ul></section>");
  }
  if (r.kind === "GATE") {
    parts.push(`<section id="page-enforcement"><h2>Enforcement</h2><p>${link(page, "gates.html", "Required tests and where they are implemented", fragment("gate", r.id))}.</p></section>`);
  }
  // Records first, then README/SECURITY.
  const back = [...(backlinks.get(r.id) ?? [])].sort((a, b) => cmp(`${ctx.documents.has(a) ? 1 : 0}${a}`, `${ctx.documents.has(b) ? 1 : 0}${b}`));
  parts.push('<section id="page-backlinks"><h2>Backlinks</h2>');
  if (back.length === 0) parts.push('<p class="muted">No record links here.</p>');
  else {
    parts.push("<ul>");
    for (const b of back) {
      const doc = ctx.documents.get(b);
      parts.push(`<li>${doc ? link(page, doc.page, doc.label) : recordLink(ctx, page, b)}</li>`);
    }
    parts.push("</ul>");
  }
  parts.push("</section>");
  return layout({ path: page, title: `${r.id}: ${r.title}`, body: parts.join("\n"), nav: ctx.nav, section: "index.html" });
}

function admitCell(publishers: readonly string[], cls: string, event: string): string {
  if (expectedAdmit(publishers, cls)) return `<td class="admit" title="${esc(`${cls} may publish ${event}`)}">✓</td>`;
  const caps = publishers
    .map((p) => p.split("+"))
    .filter(([base, cap]) => cap !== undefined && (base === cls || (base === "ext:any" && cls.startsWith("ext:"))))
    .map(([, cap]) => cap ?? "");
  if (caps.length > 0) {
    return `<td class="cap" title="${esc(`${cls} may publish ${event} only with capability ${caps.join(", ")}`)}">✓<sup>${esc(caps.join(","))}</sup></td>`;
  }
  return '<td class="deny"><span class="visually-hidden">no</span></td>';
}

function matrixPage(ctx: Ctx): string {
  const page = "matrix.html";
  const events = ctx.tables.events;
  const head = [
    "<th>event</th>",
    ...CONCRETE_CLASSES.map((c) => `<th class="cls"><code>${esc(c)}</code></th>`),
    "<th>persistence</th><th>protected</th><th>canonical successors</th><th>record</th>",
  ].join("");
  const cols = CONCRETE_CLASSES.length + 5;
  const rows: string[] = [];
  let family = "";
  for (const e of events) {
    if (e.family !== family) {
      family = e.family;
      rows.push(`<tr class="family"><th colspan="${cols}" id="${esc(fragment("family", family))}">${esc(family)}</th></tr>`);
    }
    const a = e.authority;
    const succ = a.successors.length === 0 ? '<span class="muted">—</span>' : a.successors.map((s) => codeLink(page, "events.html", s, fragment("event", s))).join(" ");
    rows.push(
      [
        `<tr id="${esc(fragment("row", e.name))}" data-event="${esc(e.name)}">`,
        `<th scope="row">${codeLink(page, "events.html", e.name, fragment("event", e.name))}</th>`,
        ...CONCRETE_CLASSES.map((c) => admitCell(a.publishers, c, e.name)),
        `<td class="persist persist-${esc(a.persistence)}" title="${esc(PERSISTENCE_TEXT[a.persistence] ?? "")}">${esc(a.persistence)}</td>`,
        `<td class="${a.protected ? "prot" : "unprot"}">${a.protected ? "yes" : "no"}</td>`,
        `<td class="succ">${succ}</td>`,
        `<td class="owner">${codeLink(page, recordPage(a.record), a.record)}</td>`,
        "</tr>",
      ].join(""),
    );
  }
  const families = [...new Set(events.map((e) => e.family))];
  const body = [
    "<h1>Authority matrix</h1>",
    `<p class="lead">Who may publish each of the ${events.length} events, where it is stored once committed, whether interceptors may touch it, and which canonical facts the harness publishes after validating it. Deny by default: an empty cell means the publisher class is refused. Rows come from the <code>## Authority</code> tables of the owning SPECs (${link(page, recordPage("SPEC-event-publication"), "SPEC-event-publication")} defines the vocabulary).</p>`,
    '<dl class="legend">',
    '<dt class="admit">✓</dt><dd>admitted</dd>',
    '<dt class="cap">✓<sup>cap</sup></dt><dd>admitted only for peers the harness configured with that capability</dd>',
    `<dt>persistence</dt><dd>${Object.entries(PERSISTENCE_TEXT)
      .map(([k, v]) => `<code>${esc(k)}</code> ${esc(v)}`)
      .join(" · ")}</dd>`,
    "<dt>protected</dt><dd>interceptors cannot drop or rewrite it</dd>",
    "</dl>",
    `<p class="jump">Families: ${families.map((f) => link(page, page, f, fragment("family", f))).join(" · ")}</p>`,
    '<div class="scroll">',
    `<table class="matrix" id="authority-matrix">\n<thead><tr>${head}</tr></thead>\n<tbody>\n${rows.join("\n")}\n</tbody>\n</table>`,
    "</div>",
  ];
  return layout({ path: page, title: "Authority matrix", body: body.join("\n"), nav: ctx.nav, wide: true });
}

function eventsPage(ctx: Ctx): string {
  const page = "events.html";
  const env = envFor(ctx, page);
  const events = ctx.tables.events;
  const families = [...new Set(events.map((e) => e.family))];
  const parts = [
    "<h1>Event catalog</h1>",
    `<p class="lead">Every event payload, from the TypeSpec contract. Names are <code>&lt;family&gt;.&lt;call&gt;</code>; each event travels inside <code>emit</code> and <code>deliver</code> (${link(page, "messages.html", "wire messages")}).</p>`,
    '<nav class="toc"><ul>',
    ...families.map((f) => `<li>${link(page, page, f, fragment("family", f))} <span class="muted">(${events.filter((e) => e.family === f).length})</span></li>`),
    "</ul></nav>",
  ];
  for (const f of families) {
    parts.push(`<h2 id="${esc(fragment("family", f))}">${esc(f)}</h2>`);
    for (const e of events.filter((x) => x.family === f)) {
      const id = schemaIdOf(e.model);
      const schema = ctx.schemas.get(id) ?? {};
      const a = e.authority;
      const succ = a.successors.length === 0 ? "—" : a.successors.map((s) => codeLink(page, page, s, fragment("event", s))).join(", ");
      parts.push(`<section class="entry" id="${esc(fragment("event", e.name))}">`);
      parts.push(`<h3><code>${esc(e.name)}</code></h3>`);
      if (e.description) parts.push(`<p>${renderInline(ctx.md, e.description, env)}</p>`);
      parts.push(
        [
          '<dl class="facts">',
          `<dt>publishers</dt><dd>${a.publishers.map((p) => `<code>${esc(p)}</code>`).join(", ")}</dd>`,
          `<dt>persistence</dt><dd><code>${esc(a.persistence)}</code> <span class="muted">${esc(PERSISTENCE_TEXT[a.persistence] ?? "")}</span></dd>`,
          `<dt>protected</dt><dd>${a.protected ? "yes" : "no"}</dd>`,
          `<dt>successors</dt><dd>${succ}</dd>`,
          `<dt>owner</dt><dd>${codeLink(page, recordPage(a.record), a.record)} · ${link(page, "matrix.html", "matrix row", fragment("row", e.name))}</dd>`,
          `<dt>schema</dt><dd><code>generated/schemas/${esc(id)}</code></dd>`,
          "</dl>",
        ].join(""),
      );
      parts.push(fieldTable(fieldRows(schema, typeCtx(ctx, page, schema), ctx.md, env), "No fields."));
      parts.push("</section>");
    }
  }
  return layout({ path: page, title: "Event catalog", body: parts.join("\n"), nav: ctx.nav });
}

function messagesPage(ctx: Ctx): string {
  const page = "messages.html";
  const env = envFor(ctx, page);
  const messages = ctx.tables.messages;
  const parts = [
    "<h1>Wire messages</h1>",
    `<p class="lead">Every frame on the socket and on extension stdio is a CBOR map <code>{message, payload}</code>, validated before any handler sees it (${link(page, recordPage("SPEC-wire-protocol"), "SPEC-wire-protocol")}).</p>`,
    '<table class="summary"><thead><tr><th>message</th><th>direction</th><th>description</th></tr></thead><tbody>',
    ...messages.map(
      (m) =>
        `<tr><td>${codeLink(page, page, m.name, fragment("message", m.name))}</td><td>${esc(DIRECTION_TEXT[m.direction] ?? m.direction)}</td><td>${renderInline(ctx.md, m.description, env)}</td></tr>`,
    ),
    "</tbody></table>",
  ];
  for (const dir of Object.keys(DIRECTION_TEXT)) {
    const list = messages.filter((m) => m.direction === dir);
    if (list.length === 0) continue;
    parts.push(`<h2 id="${esc(fragment("direction", dir))}">${esc(DIRECTION_TEXT[dir] ?? dir)}</h2>`);
    for (const m of list) {
      const id = schemaIdOf(m.model);
      const schema = ctx.schemas.get(id) ?? {};
      const tctx = typeCtx(ctx, page, schema);
      const payloadProp = (schema.properties as Record<string, JsonSchema> | undefined)?.payload ?? {};
      let payload: JsonSchema = payloadProp;
      let payloadNote = "";
      const ref = payloadProp.$ref;
      if (typeof ref === "string" && !ref.startsWith("#")) {
        payload = ctx.schemas.get(ref) ?? {};
        payloadNote = `<p>Payload: ${typeHtml(payloadProp, tctx)}</p>`;
      }
      parts.push(`<section class="entry" id="${esc(fragment("message", m.name))}">`);
      parts.push(`<h3><code>${esc(m.name)}</code></h3>`);
      if (m.description) parts.push(`<p>${renderInline(ctx.md, m.description, env)}</p>`);
      parts.push(
        `<dl class="facts"><dt>direction</dt><dd>${esc(DIRECTION_TEXT[m.direction] ?? m.direction)}</dd><dt>schema</dt><dd><code>generated/schemas/${esc(id)}</code></dd></dl>`,
      );
      parts.push(payloadNote);
      parts.push(fieldTable(hasFields(payload) ? fieldRows(payload, tctx, ctx.md, env, "", 0) : [], "Empty payload."));
      parts.push("</section>");
    }
  }
  return layout({ path: page, title: "Wire messages", body: parts.filter((p) => p !== "").join("\n"), nav: ctx.nav });
}

function modelsPage(ctx: Ctx): string {
  const page = "models.html";
  const env = envFor(ctx, page);
  const usedBy = new Map<string, Set<string>>();
  for (const [id, schema] of ctx.schemas) {
    for (const ref of refsOf(schema)) {
      const set = usedBy.get(ref) ?? new Set<string>();
      set.add(id);
      usedBy.set(ref, set);
    }
  }
  const refLink = refLinkFor(ctx);
  const models = [...ctx.schemas.keys()].filter((id) => !ctx.eventBySchema.has(id) && !ctx.messageBySchema.has(id));
  const groupOf = (s: JsonSchema): string =>
    typeof s["x-tau-config"] === "string" ? "config" : typeof s["x-tau-record"] === "string" ? "record" : typeof s["x-tau-format"] === "string" ? "format" : "shared";
  const groups: Array<[string, string, string]> = [
    ["shared", "Shared models", "Types that event payloads and messages share."],
    ["record", "Journal records", "What tau writes to disk, frame by frame."],
    ["format", "Output formats", "What tau writes for scripts to read."],
    ["config", "Configuration files", "The files tau reads its configuration from, validated by the same schemas."],
  ];
  const parts = [
    "<h1>Models</h1>",
    '<p class="lead">Every schema that is not itself an event or a message: the shared types, the journal records and the configuration files.</p>',
  ];
  for (const [key, title, text] of groups) {
    const list = models.filter((id) => groupOf(ctx.schemas.get(id) ?? {}) === key);
    if (list.length === 0) continue;
    parts.push(`<h2 id="${esc(fragment("group", key))}">${esc(title)}</h2><p>${esc(text)}</p>`);
    parts.push(`<p class="jump">${list.map((id) => codeLink(page, page, id.replace(/\.json$/, ""), fragment("model", id.replace(/\.json$/, "")))).join(" ")}</p>`);
    for (const id of list) {
      const schema = ctx.schemas.get(id) ?? {};
      const name = id.replace(/\.json$/, "");
      const tctx = typeCtx(ctx, page, schema);
      parts.push(`<section class="entry" id="${esc(fragment("model", name))}">`);
      parts.push(`<h3><code>${esc(name)}</code></h3>`);
      if (typeof schema.description === "string") parts.push(`<p>${renderInline(ctx.md, schema.description, env)}</p>`);
      const facts = [`<dt>schema</dt><dd><code>generated/schemas/${esc(id)}</code></dd>`];
      if (typeof schema["x-tau-config"] === "string") facts.push(`<dt>file</dt><dd><code>${esc(schema["x-tau-config"])}</code></dd>`);
      if (typeof schema["x-tau-record"] === "string") facts.push(`<dt>record of</dt><dd>${esc(schema["x-tau-record"])}</dd>`);
      if (typeof schema["x-tau-format"] === "string") facts.push(`<dt>format of</dt><dd>${link(page, RUN_STREAM_PAGE, schema["x-tau-format"])}</dd>`);
      if (!hasFields(schema)) facts.push(`<dt>type</dt><dd>${typeHtml(schema, tctx)}</dd>`);
      const users = [...(usedBy.get(id) ?? [])].sort().filter((u) => u !== id);
      if (users.length > 0) {
        facts.push(
          `<dt>used by</dt><dd>${users
            .map((u) => {
              const t = refLink(u, page);
              return t ? `<a href="${esc(t.href)}"><code>${esc(t.name)}</code></a>` : `<code>${esc(u)}</code>`;
            })
            .join(", ")}</dd>`,
        );
      }
      parts.push(`<dl class="facts">${facts.join("")}</dl>`);
      if (hasFields(schema)) parts.push(fieldTable(fieldRows(schema, tctx, ctx.md, env), "No fields."));
      parts.push("</section>");
    }
  }
  return layout({ path: page, title: "Models", body: parts.join("\n"), nav: ctx.nav });
}

function gatesPage(ctx: Ctx): string {
  const page = "gates.html";
  const env = envFor(ctx, page);
  const locations = scanTestLocations(ctx.root);
  const gates = ctx.tables.records.filter((r) => r.kind === "GATE");
  const state = (id: string): "implemented" | "todo" | "missing" => {
    const locs = locations.get(id) ?? [];
    if (locs.some((l) => l.state === "test")) return "implemented";
    if (locs.length > 0) return "todo";
    return "missing";
  };
  const parts = [
    "<h1>Gates</h1>",
    `<p class="lead">Invariants every change must keep. A test implements a gate's test id when its title begins with the id in brackets, <code>it("[some.test-id] …")</code>; tests are found in ${SCANNED_DIRS.map((d) => `<code>${esc(d)}/</code>`).join(", ")}. For an <strong>enforced</strong> gate, <code>npm run codegen:check</code> fails while any id has no test; a <strong>proposed</strong> gate lists its ids as pending stubs.</p>`,
    '<table class="summary"><thead><tr><th>gate</th><th>status</th><th>tests</th></tr></thead><tbody>',
    ...gates.map((g) => {
      const done = g.requiredTests.filter((t) => state(t) === "implemented").length;
      return `<tr><td>${codeLink(page, page, g.id, fragment("gate", g.id))} <span class="muted">${esc(g.title)}</span></td><td>${badge(g.status)}</td><td>${done} of ${g.requiredTests.length} implemented</td></tr>`;
    }),
    "</tbody></table>",
  ];
  for (const g of gates) {
    parts.push(`<section class="entry gate" id="${esc(fragment("gate", g.id))}">`);
    parts.push(`<h2>${esc(g.title)}</h2>`);
    parts.push(`<dl class="facts"><dt>record</dt><dd>${codeLink(page, recordPage(g.id), g.id)}</dd><dt>status</dt><dd>${badge(g.status)}</dd></dl>`);
    const rule = g.sections.get("Gate") ?? "";
    if (rule.trim() !== "") parts.push(`<div class="rule">${renderBlock(ctx.md, rule, env)}</div>`);
    parts.push('<table class="tests"><thead><tr><th>required test id</th><th>state</th><th>implemented in</th></tr></thead><tbody>');
    for (const t of g.requiredTests) {
      const s = state(t);
      const locs = (locations.get(t) ?? []).map((l) => `<code>${esc(`${l.file}:${l.line}`)}</code>${l.state === "test" ? "" : ` <span class="muted">(${l.state})</span>`}`);
      const label = s === "implemented" ? "implemented" : s === "todo" ? "todo only" : "no test yet";
      parts.push(`<tr><td><code>${esc(t)}</code></td><td><span class="badge test-${s}">${esc(label)}</span></td><td>${locs.length === 0 ? '<span class="muted">—</span>' : locs.join("<br>")}</td></tr>`);
    }
    parts.push("</tbody></table></section>");
  }
  return layout({ path: page, title: "Gates", body: parts.join("\n"), nav: ctx.nav });
}

function runStreamPage(ctx: Ctx): string {
  const page = RUN_STREAM_PAGE;
  const recordLinkOn = (id: string) => (ctx.recordsById.has(id) ? codeLink(page, recordPage(id), id) : `<code>${esc(id)}</code>`);
  return renderRunStream({
    schemas: ctx.schemas,
    md: ctx.md,
    env: envFor(ctx, page),
    typeCtx: (schema) => typeCtx(ctx, page, schema),
    recordLinks: { manners: recordLinkOn("SPEC-cli-manners"), trace: recordLinkOn("SPEC-trace-export") },
  });
}

function documentPage(ctx: Ctx, doc: { page: string; label: string; text: string }): string {
  const env = envFor(ctx, doc.page);
  const html = renderBlock(ctx.md, doc.text, env);
  const h1 = /^#\s+(.+)$/m.exec(doc.text);
  return layout({ path: doc.page, title: h1?.[1]?.trim() ?? doc.label, body: `<article class="record document">\n${html}</article>`, nav: ctx.nav });
}

// ---------------------------------------------------------------------------------------------

/** Builds every page of the site in memory; throws an AggregateCodegenError naming each problem. */
export async function buildSite(input: SiteInput): Promise<Map<string, string>> {
  const { root } = input;
  const problems = new Problems();
  const schemas = await compileSpec(root);
  const records = loadRecords(root, problems);
  const tables = buildTables(schemas, records, problems);
  problems.throwIfAny();

  const documents = new Map<string, { page: string; label: string; text: string }>();
  for (const d of DOCUMENTS) {
    const path = join(root, d.file);
    if (existsSync(path)) documents.set(d.file, { page: d.page, label: d.label, text: readFileSync(path, "utf8") });
  }
  const ctx: Ctx = {
    root,
    md: createMarkdown(),
    tables,
    schemas,
    recordPages: new Map(records.map((r) => [r.id, recordPage(r.id)])),
    recordsById: new Map(records.map((r) => [r.id, r])),
    documents,
    documentPages: new Map([...documents].map(([file, d]) => [file, d.page])),
    eventBySchema: new Map(tables.events.map((e) => [schemaIdOf(e.model), e])),
    messageBySchema: new Map(tables.messages.map((m) => [schemaIdOf(m.model), m])),
    nav: [
      { page: "index.html", label: "Overview" },
      { page: GUIDE_PAGES.start, label: "Start" },
      { page: GUIDE_PAGES.configuration, label: "Configuration" },
      { page: GUIDE_PAGES.commands, label: "Commands" },
      { page: GUIDE_PAGES.providers, label: "Providers" },
      { page: GUIDE_PAGES.sessions, label: "Sessions" },
      { page: GUIDE_PAGES.approvals, label: "Approvals" },
      { page: GUIDE_PAGES.troubleshooting, label: "Troubleshooting" },
      { page: GUIDE_PAGES.editors, label: "Editors" },
      { page: GUIDE_PAGES.mcp, label: "MCP servers" },
      { page: GUIDE_PAGES.slack, label: "Slack" },
      { page: GUIDE_PAGES.web, label: "Web" },
      { page: GUIDE_PAGES.gmail, label: "Gmail" },
      { page: GUIDE_PAGES.swarm, label: "Swarm" },
      { page: GUIDE_PAGES.handoff, label: "Handoff" },
      { page: GUIDE_PAGES.extensions, label: "Extensions" },
      { page: "matrix.html", label: "Authority" },
      { page: "events.html", label: "Events" },
      { page: "messages.html", label: "Messages" },
      { page: "models.html", label: "Models" },
      { page: "gates.html", label: "Gates" },
      { page: "cli.html", label: "CLI" },
      { page: "errors.html", label: "Errors" },
      { page: RUN_STREAM_PAGE, label: "Run stream" },
      ...[...documents.values()].map((d) => ({ page: d.page, label: d.label })),
    ],
  };

  const backlinks = new Map<string, Set<string>>();
  const addBack = (target: string, from: string) => {
    const set = backlinks.get(target) ?? new Set<string>();
    set.add(from);
    backlinks.set(target, set);
  };
  for (const r of records) for (const l of [...r.links, ...r.bodyLinks]) if (l !== r.id) addBack(l, r.id);
  // Record links inside README and SECURITY must resolve too; the ones that do are backlinks.
  for (const [file, doc] of documents) {
    const env = envFor(ctx, doc.page);
    ctx.md.parse(doc.text, env);
    for (const id of [...new Set(env.missing)].sort()) problems.add(file, `links to missing record ${id}`);
    for (const id of env.linked) addBack(id, file);
  }
  problems.throwIfAny();

  const files = new Map<string, string>();
  files.set("style.css", STYLE + GUIDE_STYLE);
  files.set("index.html", indexPage(ctx));
  for (const r of records) files.set(recordPage(r.id), recordPageHtml(ctx, r, backlinks));
  files.set("matrix.html", matrixPage(ctx));
  files.set("events.html", eventsPage(ctx));
  files.set("messages.html", messagesPage(ctx));
  files.set("models.html", modelsPage(ctx));
  files.set("gates.html", gatesPage(ctx));
  const inline = (text: string) => renderInline(ctx.md, text, envFor(ctx, "cli.html"));
  files.set("cli.html", layout({ path: "cli.html", title: "CLI help", body: renderCli(readCommands(input.commands), inline), nav: ctx.nav }));
  const errorsInline = (text: string) => renderInline(ctx.md, text, envFor(ctx, "errors.html"));
  const recordLinkOn = (page: string, id: string) => (ctx.recordsById.has(id) ? codeLink(page, recordPage(id), id) : `<code>${esc(id)}</code>`);
  const runLinks = { manners: recordLinkOn("errors.html", "SPEC-cli-manners"), stream: link("errors.html", RUN_STREAM_PAGE, "the run stream") };
  files.set("errors.html", layout({ path: "errors.html", title: "Errors", body: renderErrors(input.errors, errorsInline, recordLinkOn("errors.html", "SPEC-cli-errors"), runLinks), nav: ctx.nav }));
  files.set(RUN_STREAM_PAGE, layout({ path: RUN_STREAM_PAGE, title: "tau run --json", body: runStreamPage(ctx), nav: ctx.nav }));
  files.set(RUN_STREAM_SCHEMA_FILE, `${JSON.stringify(runStreamSchema(schemas), null, 2)}\n`);
  for (const doc of documents.values()) files.set(doc.page, documentPage(ctx, doc));
  const guide: GuideContext = {
    md: ctx.md,
    env: (p) => envFor(ctx, p),
    schemas,
    records: ctx.recordsById,
    commands: readCommands(input.commands),
    readme: documents.get("README.md")?.text,
    recordPage,
    hasSecurity: documents.has("SECURITY.md"),
  };
  const guidePages: Array<[string, string, string]> = [
    [GUIDE_PAGES.start, "Getting started", startPage(guide)],
    [GUIDE_PAGES.configuration, "Configuration", configurationPage(guide, input.guide)],
    [GUIDE_PAGES.commands, "Commands and keys", commandsPage(guide, input.guide)],
    [GUIDE_PAGES.providers, "Providers", providersPage(guide)],
    [GUIDE_PAGES.sessions, "Sessions", sessionsPage(guide)],
    [GUIDE_PAGES.approvals, "Approvals", approvalsPage(guide, input.guide)],
    [GUIDE_PAGES.troubleshooting, "Troubleshooting", troubleshootingPage(guide)],
    [GUIDE_PAGES.editors, "Editors", editorsPage(guide)],
    [GUIDE_PAGES.mcp, "MCP servers", mcpPage(guide)],
    [GUIDE_PAGES.slack, "Setting up a Slack app for tau", slackPage(guide)],
    [GUIDE_PAGES.web, "Web search and fetch", webPage(guide)],
    [GUIDE_PAGES.gmail, "Gmail", gmailPage(guide)],
    [GUIDE_PAGES.swarm, "Running a swarm of three workers", swarmPage(guide)],
    [GUIDE_PAGES.handoff, "Handoff", handoffPage(guide)],
    [GUIDE_PAGES.extensions, "Writing an extension", extensionsPage(guide)],
  ];
  for (const [path, title, body] of guidePages) files.set(path, layout({ path, title, body, nav: ctx.nav, wide: path === GUIDE_PAGES.configuration }));

  const sorted = new Map([...files.entries()].sort(([a], [b]) => cmp(a, b)));
  for (const p of checkLinks(sorted)) problems.add(`site/${p.page}`, p.detail);
  problems.throwIfAny();
  return sorted;
}
