// The user documentation of the site: getting started, the configuration reference (from the
// configuration schemas), colon commands and keys (from the command and key tables the UI itself
// uses), providers and sessions (from the CLI's command help and the records). Each page is built
// from those sources; the prose here only joins them.
import type MarkdownIt from "markdown-it";
import type { JsonSchema } from "../typespec.js";
import type { ParsedRecord } from "../records.js";
import { codeLink, esc, fragment, link } from "./html.js";
import { renderBlock, renderInline, type RenderEnv } from "./markdown.js";
import type { CommandHelp } from "./cli.js";
import { configKeys, yamlSnippet, yamlValue, type ConfigKey } from "./config-keys.js";

/** The interactive UI's tables, as the UI declares them (handwritten/cli/tui/). */
export interface GuideInput {
  readonly colonCommands: ReadonlyArray<{ readonly name: string; readonly usage: string; readonly summary: string }>;
  readonly keyActions: ReadonlyArray<{ readonly action: string; readonly default: string; readonly summary: string }>;
  readonly reservedKeys: ReadonlyArray<{ readonly key: string; readonly what: string }>;
  readonly keyLabel: (name: string) => string;
  readonly themeKeys: readonly string[];
  readonly defaultTheme: { readonly styles: Readonly<Record<string, object>> };
  readonly styleKeys: readonly string[];
  readonly namedColors: readonly string[];
  /** The approval dialog's choices as the UI words them (sandbox-dialog.ts), by request kind. */
  readonly approvalChoices: ReadonlyArray<{ readonly request: string; readonly labels: readonly string[] }>;
}

export interface GuideContext {
  readonly md: MarkdownIt;
  readonly env: (page: string) => RenderEnv;
  readonly schemas: ReadonlyMap<string, JsonSchema>;
  readonly records: ReadonlyMap<string, ParsedRecord>;
  readonly commands: readonly CommandHelp[];
  readonly readme: string | undefined;
  readonly recordPage: (id: string) => string;
  readonly hasSecurity: boolean;
}

export const GUIDE_PAGES = {
  start: "start.html",
  configuration: "configuration.html",
  commands: "commands.html",
  providers: "providers.html",
  sessions: "sessions.html",
  approvals: "approvals.html",
  troubleshooting: "troubleshooting.html",
  editors: "editors.html",
  mcp: "mcp.html",
  slack: "slack.html",
  web: "web.html",
  gmail: "gmail.html",
  swarm: "swarm.html",
  handoff: "handoff.html",
  extensions: "extensions.html",
} as const;

/** A configuration file of the reference: its schema's `x-tau-config` name, where it lives, what it is for. */
const CONFIG_FILES: ReadonlyArray<{ file: string; where: string; what: string }> = [
  {
    file: "harness.yaml",
    where: "`CONFIG/harness.yaml`, then every `CONFIG/harness.d/*.yaml` in name order (at most 64), then `--harness-config KEY=VALUE`",
    what: "The session daemon's settings: extensions, provider profiles, the model, compaction, roles. Maps merge key by key, `extensions` by name, other lists are replaced whole.",
  },
  {
    file: "cli.yaml",
    where: "`CONFIG/cli.yaml`",
    what: "The interactive UI's settings (`tau`, `tau attach`, `tau resume`): theme, editor, keys. `tau init` writes a commented sample.",
  },
  {
    file: "sandbox.yaml",
    where: "`CONFIG/sandbox.yaml`, and a trusted project's `.tau/sandbox.yaml` (or `--sandbox-config FILE` instead of both)",
    what: "The sandbox of the model's `shell` commands: whether it is on, whether it asks, the hosts and paths it allows.",
  },
  {
    file: "mcp.yaml",
    where: "a trusted project's `.tau/mcp.yaml` (the user's own servers are `mcp_servers` of harness.yaml)",
    what: "MCP servers the project brings; an entry replaces the user's entry of the same name (SPEC-mcp, which also shows how to move an `.mcp.json` over).",
  },
];

function keyId(file: string, path: string): string {
  return fragment("key", `${file}-${path}`);
}

export function para(ctx: GuideContext, page: string, text: string): string {
  return `<p>${renderInline(ctx.md, text, ctx.env(page))}</p>`;
}

function terminal(lines: readonly string[]): string {
  return `<pre class="terminal"><code>${lines.map((l) => esc(l)).join("\n")}</code></pre>`;
}

function command(ctx: GuideContext, id: string): CommandHelp {
  const c = ctx.commands.find((x) => x.id === id);
  if (!c) throw new Error(`the docs name a command tau does not have: ${id}`);
  return c;
}

/** A command's usage, description and flags, with a link to its full help. */
function commandBrief(ctx: GuideContext, page: string, id: string): string {
  const c = command(ctx, id);
  const inline = (t: string) => renderInline(ctx.md, t, ctx.env(page));
  const parts = [`<h3 id="${esc(fragment("cmd", id))}"><code>tau ${esc(c.words)}</code></h3>`, `<p>${inline(c.summary)} ${link(page, "cli.html", "Full help", fragment("cmd", id))}.</p>`];
  if (c.description) parts.push(`<p>${inline(c.description)}</p>`);
  parts.push(terminal([`$ ${c.usage}`]));
  if (c.flags.length > 0) {
    parts.push('<dl class="flags">');
    for (const f of c.flags) parts.push(`<dt><code>${esc(`${f.char ? `-${f.char}, ` : ""}--${f.name}`)}</code></dt><dd>${inline(f.description)}</dd>`);
    parts.push("</dl>");
  }
  return parts.join("\n");
}

/** A record's section, rendered (its links resolved to record pages), under a note naming the record. */
export function recordSection(ctx: GuideContext, page: string, id: string, section: string): string {
  const r = ctx.records.get(id);
  const text = r?.sections.get(section);
  if (text === undefined) throw new Error(`the docs quote ${id}, "${section}", which does not exist`);
  // Sub-headings of the section become h3/h4, below the page's own h2.
  const body = text.replace(/^### /gm, "#### ");
  return `<div class="quoted">${renderBlock(ctx.md, body, ctx.env(page))}<p class="muted">From ${codeLink(page, ctx.recordPage(id), id)}, “${esc(section)}”, the rule tau follows.</p></div>`;
}

// ---------------------------------------------------------------------------------------------

export function startPage(ctx: GuideContext): string {
  const page = GUIDE_PAGES.start;
  const first = /```sh\n([\s\S]*?)```/.exec(ctx.readme ?? "")?.[1]?.trimEnd().split("\n") ?? [];
  const add = command(ctx, "provider:add");
  const run = command(ctx, "run");
  return [
    "<h1>Getting started</h1>",
    '<p class="lead">tau is a coding agent for your terminal: it reads and changes the files of the folder you start it in, runs commands there (in a sandbox), and keeps every session so you can leave and come back.</p>',
    '<h2 id="install">Set up and run a first prompt</h2>',
    para(ctx, page, "From a checkout of tau, on Node 20 or newer (the same two commands as the README):"),
    terminal(first.map((l) => `$ ${l}`)),
    para(
      ctx,
      page,
      "With no model configured, tau answers with a clearly labelled offline demo that still makes a real tool call in your folder, so you can see it work before you connect a model. `npm link` puts `tau` on your PATH; otherwise run `./bin/tau.cjs`.",
    ),
    '<h2 id="first-prompt">Your first session</h2>',
    para(ctx, page, "Start the interactive UI in the folder you want to work on, and type a prompt:"),
    terminal(["$ cd ~/src/my-project", "$ tau", "› what does this project do, and how are its tests run?"]),
    para(
      ctx,
      page,
      "Enter sends; Alt-Enter adds a line. While the agent works you see its answer, its tool calls with their live output and a timer, and the status line (model, context used, tokens and cost). Esc interrupts the running turn; `:help` lists the commands; `:quit` leaves. A line starting with `!` runs a shell command yourself.",
    ),
    `<p>Every key and command is on ${link(page, GUIDE_PAGES.commands, "Commands and keys")}.</p>`,
    para(ctx, page, "For one prompt without the UI (scripts, CI), `tau run` prints the answer and exits:"),
    terminal([`$ tau run "list the TODO comments in src/"`, "$ git diff | tau run - --json", `$ cat build.log | tau run "why did the build fail?"`]),
    para(
      ctx,
      page,
      "Text piped to `tau run` with a prompt reaches the model after the prompt, in a block marked as standard input (`<stdin>` … `</stdin>`); the two together may be at most 8 MiB, and more is refused before anything is sent.",
    ),
    `<p>${esc(run.summary)} ${link(page, "cli.html", "All of its flags", fragment("cmd", "run"))}.</p>`,
    '<h2 id="connect">Connect a model</h2>',
    para(ctx, page, `tau talks to any OpenAI-compatible endpoint. ${add.summary} The key is read from standard input (or a prompt that does not echo), never from the command line:`),
    terminal([
      "$ tau provider add example --base-url https://api.example.com/v1 --model model-large,model-small --api-key-stdin < ~/example.key",
      "$ tau provider list",
    ]),
    para(ctx, page, "tau asks the endpoint for its models first and writes nothing if it does not answer. Then start `tau` again: the status line shows the model, and `:model` (Tab completes) switches between the models the endpoint serves."),
    `<p>More on ${link(page, GUIDE_PAGES.providers, "Providers")}: several profiles, environment variables, prices and context windows.</p>`,
    '<h2 id="next">Next</h2>',
    "<ul>",
    `<li>${link(page, GUIDE_PAGES.configuration, "Configuration")}: every key of <code>harness.yaml</code>, <code>cli.yaml</code>, <code>sandbox.yaml</code>, provider profiles and themes.</li>`,
    `<li>${link(page, GUIDE_PAGES.sessions, "Sessions")}: leave a session running, attach to it, resume it later, list and delete saved ones.</li>`,
    ctx.hasSecurity ? `<li>${link(page, "security.html", "Security")}: what tau trusts, what the sandbox protects and what it does not.</li>` : "",
    `<li>${link(page, "cli.html", "CLI reference")} and ${link(page, "errors.html", "errors")}: every command, flag, error code and exit status.</li>`,
    "</ul>",
  ]
    .filter((p) => p !== "")
    .join("\n");
}

function keyTable(ctx: GuideContext, page: string, file: string, keys: readonly ConfigKey[]): string {
  const env = ctx.env(page);
  const rows = keys.map((k) => {
    const depth = k.path.split(/\.|\[\]\./).length - 1;
    const example = k.example ?? k.default;
    const exampleHtml = k.section || example === undefined ? '<span class="muted">—</span>' : `<pre class="yaml"><code>${esc(yamlSnippet(k.path, example))}</code></pre>`;
    const def = k.default === undefined ? `<span class="muted">${k.required ? "required" : "none"}</span>` : `<code>${esc(yamlValue(k.default))}</code>`;
    return [
      `<tr id="${esc(keyId(file, k.path))}" data-key="${esc(k.path)}" data-file="${esc(file)}">`,
      `<td class="field depth-${Math.min(depth, 4)}"><code>${esc(k.path)}</code></td>`,
      `<td>${esc(k.type)}</td>`,
      `<td>${def}</td>`,
      `<td>${k.description ? renderInline(ctx.md, k.description, env) : ""}</td>`,
      `<td class="example">${exampleHtml}</td>`,
      "</tr>",
    ].join("");
  });
  return [
    '<table class="config-keys">',
    "<thead><tr><th>key</th><th>type</th><th>default</th><th>what it does</th><th>example</th></tr></thead>",
    "<tbody>",
    ...rows,
    "</tbody></table>",
  ].join("\n");
}

/** The schema whose `x-tau-config` is `file`. */
function configSchema(ctx: GuideContext, file: string): JsonSchema {
  for (const s of ctx.schemas.values()) if (s["x-tau-config"] === file) return s;
  throw new Error(`no configuration schema for ${file}`);
}

export function configurationPage(ctx: GuideContext, input: GuideInput): string {
  const page = GUIDE_PAGES.configuration;
  const parts = [
    "<h1>Configuration</h1>",
    '<p class="lead">Every key tau reads, generated from the schemas that validate the files (<code>spec/config.tsp</code>): its type, its default and an example. Every file is optional; tau runs with none.</p>',
    para(
      ctx,
      page,
      "`CONFIG` is `$TAU_HOME/config` when `TAU_HOME` is set, else `$XDG_CONFIG_HOME/tau`, else `~/.config/tau`. Files are YAML, at most 1 MiB. An unknown key, a wrong type or a value out of range stops tau with the file, the line and the key (`…/cli.yaml:3: keys.redraw: ctrl-o is already bound to expand_tool_output`) and exit status 2; nothing is silently ignored. `tau init` writes commented samples of `harness.yaml` and `cli.yaml`.",
    ),
    '<nav class="toc"><ul>',
    ...CONFIG_FILES.map((f) => `<li>${link(page, page, f.file, fragment("file", f.file))}</li>`),
    `<li>${link(page, page, "provider profiles", "file-provider-profiles")}</li>`,
    `<li>${link(page, page, "themes", "file-themes")}</li>`,
    "</ul></nav>",
  ];
  for (const f of CONFIG_FILES) {
    const keys = configKeys(configSchema(ctx, f.file), ctx.schemas);
    parts.push(`<h2 id="${esc(fragment("file", f.file))}"><code>${esc(f.file)}</code></h2>`);
    parts.push(para(ctx, page, f.what));
    parts.push(para(ctx, page, `Read from ${f.where}.`));
    if (f.file === "cli.yaml") {
      parts.push(`<p>The keys of <code>keys</code> are the UI's actions; ${link(page, GUIDE_PAGES.commands, "Commands and keys", "keys")} lists them with the keys the editor keeps for itself, which cannot be bound.</p>`);
    }
    parts.push(keyTable(ctx, page, f.file, keys));
  }
  parts.push('<h2 id="file-provider-profiles">Provider profiles</h2>');
  parts.push(
    `<p>A provider profile is the ${link(page, page, "providers", keyId("harness.yaml", "providers"))} entry of <code>harness.yaml</code>. <code>tau provider add NAME</code> writes it as the drop-in <code>CONFIG/harness.d/provider-NAME.yaml</code> and its key as <code>CONFIG/secrets/provider-NAME</code> (mode 0600); its keys are ${link(page, page, "providers.NAME.*", keyId("harness.yaml", "providers.NAME.base_url"))} above. See ${link(page, GUIDE_PAGES.providers, "Providers")}.</p>`,
  );
  parts.push(terminal(["# CONFIG/harness.d/provider-example.yaml, as tau provider add writes it", "providers:", "  example:", "    base_url: https://api.example.com/v1", "    models: [model-large, model-small]", "    api_key_secret: provider-example"]));
  parts.push('<h2 id="file-themes">Themes</h2>');
  parts.push(
    para(
      ctx,
      page,
      "A theme is a file `CONFIG/themes/NAME.yaml` (or `.json`) chosen by `theme: NAME` in cli.yaml or `:theme NAME` in the UI. It has a `name` and `styles`: any of the style slots below, each a map of " +
        input.styleKeys.map((k) => `\`${k}\``).join(", ") +
        ". A colour is a name (" +
        input.namedColors.join(", ") +
        "), a palette index 0–255 or `#rrggbb`; flags are `true` or `false`. A slot the theme leaves out keeps its default. Themes hold styles only, never escape bytes: anything else is refused with the file and the key.",
    ),
  );
  parts.push(terminal(["# CONFIG/themes/calm.yaml", "name: calm", "styles:", "  status: { fg: blue, inverse: true }", "  mdHeading: { fg: '#5f87af', bold: true }"]));
  parts.push('<table class="config-keys"><thead><tr><th>style slot</th><th>default</th></tr></thead><tbody>');
  for (const k of input.themeKeys) {
    const style = input.defaultTheme.styles[k] ?? {};
    const shown = Object.keys(style).length === 0 ? '<span class="muted">the terminal\'s own</span>' : `<code>${esc(yamlValue(style))}</code>`;
    parts.push(`<tr id="${esc(keyId("theme", `styles.${k}`))}" data-key="styles.${esc(k)}" data-file="theme"><td><code>styles.${esc(k)}</code></td><td>${shown}</td></tr>`);
  }
  parts.push("</tbody></table>");
  return parts.join("\n");
}

export function commandsPage(ctx: GuideContext, input: GuideInput): string {
  const page = GUIDE_PAGES.commands;
  const inline = (t: string) => renderInline(ctx.md, t, ctx.env(page));
  const parts = [
    "<h1>Commands and keys</h1>",
    '<p class="lead">What you can type and press in the interactive UI, from the tables the UI itself reads (<code>handwritten/cli/tui/</code>), so this page and <code>:help</code> say the same.</p>',
    '<h2 id="input">What a line means</h2>',
    "<table><thead><tr><th>you type</th><th>what happens</th></tr></thead><tbody>",
    "<tr><td><code>text</code></td><td>a prompt for the agent (also <code>/text</code>)</td></tr>",
    "<tr><td><code>:command …</code></td><td>a command of the UI (below); it never reaches the model, known or not</td></tr>",
    "<tr><td><code>::text</code></td><td>sends <code>:text</code> to the model as it is</td></tr>",
    "<tr><td><code>!command</code></td><td>runs a shell command; its output enters the agent's context</td></tr>",
    "<tr><td><code>!!command</code></td><td>runs a shell command; its output stays in your terminal</td></tr>",
    "</tbody></table>",
    '<h2 id="colon-commands">Colon commands</h2>',
    "<p>Tab completes a command's name, and a model's name after <code>:model </code>. <code>:help COMMAND</code> explains one.</p>",
    '<table class="summary"><thead><tr><th>command</th><th>what it does</th></tr></thead><tbody>',
  ];
  for (const c of input.colonCommands) {
    const forms = c.usage.split(" | ").map((u) => `<code>${esc(u)}</code>`).join("<br>");
    parts.push(`<tr id="${esc(fragment("colon", c.name))}" data-command="${esc(c.name)}"><td>${forms}</td><td>${inline(c.summary)}</td></tr>`);
  }
  parts.push("</tbody></table>");
  parts.push(
    `<p>Extensions add commands of their own, such as <code>:gmail</code> (${link(page, GUIDE_PAGES.gmail, "Gmail")}): <code>:help</code> and Tab know them once the extension has started. What you type after such a command goes to that extension only; a command that takes a secret (a sign-in code) keeps it off the screen and out of your prompt history.</p>`,
  );
  parts.push('<h2 id="keys">Keys</h2>');
  parts.push(
    `<p>The UI's actions and their keys. Each can be bound to another key in ${link(page, GUIDE_PAGES.configuration, "cli.yaml", keyId("cli.yaml", "keys"))} (<code>escape</code>, <code>ctrl-LETTER</code>, <code>alt-LETTER</code>, or <code>none</code>); <code>:help</code> shows them as bound.</p>`,
  );
  parts.push('<table class="summary"><thead><tr><th>default key</th><th>action (cli.yaml)</th><th>what it does</th></tr></thead><tbody>');
  for (const a of input.keyActions) {
    parts.push(
      `<tr data-action="${esc(a.action)}"><td><kbd>${esc(input.keyLabel(a.default))}</kbd></td><td>${codeLink(page, GUIDE_PAGES.configuration, `keys.${a.action}`, keyId("cli.yaml", `keys.${a.action}`))}</td><td>${inline(a.summary)}</td></tr>`,
    );
  }
  parts.push("</tbody></table>");
  parts.push('<h3 id="editor-keys">Keys the editor keeps</h3><p>These cannot be bound to an action.</p>');
  parts.push('<table class="summary"><thead><tr><th>key</th><th>what it does</th></tr></thead><tbody>');
  for (const r of input.reservedKeys) parts.push(`<tr><td><kbd>${esc(input.keyLabel(r.key))}</kbd></td><td>${esc(r.what)}</td></tr>`);
  parts.push("</tbody></table>");
  return parts.join("\n");
}

export function providersPage(ctx: GuideContext): string {
  const page = GUIDE_PAGES.providers;
  return [
    "<h1>Providers</h1>",
    '<p class="lead">tau reaches models through OpenAI-compatible endpoints: a hosted service, a gateway, or a server on your own machine. Each endpoint is a named profile; its models are called <code>NAME/model</code>.</p>',
    '<h2 id="profiles">Profiles</h2>',
    commandBrief(ctx, page, "provider:add"),
    commandBrief(ctx, page, "provider:list"),
    commandBrief(ctx, page, "provider:remove"),
    `<p>A profile's keys are on ${link(page, GUIDE_PAGES.configuration, "Configuration", keyId("harness.yaml", "providers"))}.</p>`,
    '<h2 id="environment">Without a profile</h2>',
    para(ctx, page, "For a quick try, the environment is enough; the key is handed to tau's processes on a pipe, never left in their environment:"),
    terminal(["$ OPENAI_API_KEY=… tau                      # OpenAI's own endpoint (model gpt-5, or OPENAI_MODEL)", "$ OPENAI_BASE_URL=https://api.example.com/v1 OPENAI_API_KEY=… OPENAI_MODEL=model-large tau"]),
    '<h2 id="chatgpt">Signing in with ChatGPT</h2>',
    para(
      ctx,
      page,
      "A `chatgpt_ws` profile (`tau provider add NAME --api chatgpt_ws …`) uses a ChatGPT sign-in instead of a key. `tau provider login NAME` shows a one-time code to enter in any browser (it works over SSH); `--browser` opens the sign-in page in a browser on this machine instead. The tokens stay in a 0600 file and are refreshed by the provider; none is ever printed.",
    ),
    commandBrief(ctx, page, "provider:login"),
    '<h2 id="choosing">Choosing a model</h2>',
    para(
      ctx,
      page,
      "`model:` in harness.yaml sets the model of new agents; `tau run --model M` sets it for one run; `:model` lists the models and `:model NAME` switches the current agent (Tab completes). `model_info:` tells tau a model's context window and prices when the endpoint does not, so the status line can show context used and cost.",
    ),
    '<h2 id="rules">The rules</h2>',
    recordSection(ctx, page, "SPEC-configuration", "Provider profiles"),
  ].join("\n");
}

export function sessionsPage(ctx: GuideContext): string {
  const page = GUIDE_PAGES.sessions;
  return [
    "<h1>Sessions</h1>",
    '<p class="lead">A session is one conversation, with its agents, in one project folder. It runs in a daemon of its own, so it keeps working when you close the terminal, and it is saved as it goes, so you can continue it days later.</p>',
    '<h2 id="leaving">Leaving and coming back</h2>',
    para(
      ctx,
      page,
      "In the UI, `:detach` leaves the session running (a long task goes on); `:quit` leaves, and a session this terminal started ends once no UI is attached; `:quit-session` ends it for everyone. The session's title is the first line of its first prompt (or, when enabled, a short title the model writes).",
    ),
    commandBrief(ctx, page, "attach"),
    commandBrief(ctx, page, "resume"),
    '<h2 id="forking">Forking</h2>',
    para(
      ctx,
      page,
      "A fork is a new session that continues a copy of an agent's conversation, up to its last finished turn, while the session it was copied from stays as it was: try another approach from the same point, or hand the same context to a second task. In the UI, `:fork` forks the agent you are looking at and moves you to the fork; `tau resume ID --fork` and `tau run --continue --fork` (or `--resume ID --fork`) do the same from the command line, and the source may still be running.",
    ),
    commandBrief(ctx, page, "session:fork"),
    '<h2 id="listing">Listing and deleting</h2>',
    commandBrief(ctx, page, "session:list"),
    commandBrief(ctx, page, "session:rm"),
    para(ctx, page, "In the UI, `:sessions WORDS` lists the saved sessions whose title, project or id hold every word."),
    '<h2 id="where">Where sessions are kept</h2>',
    para(
      ctx,
      page,
      "In the state folder: `$TAU_HOME/state` when `TAU_HOME` is set, else `$XDG_STATE_HOME/tau`, else `~/.local/state/tau`; one folder per session and per agent, mode 0700. `tau run --ephemeral` keeps nothing.",
    ),
    '<h2 id="rules">The rules</h2>',
    recordSection(ctx, page, "SPEC-session-lifecycle", "Rules"),
  ].join("\n");
}

export function approvalsPage(ctx: GuideContext, input: GuideInput): string {
  const page = GUIDE_PAGES.approvals;
  return [
    "<h1>Approvals</h1>",
    '<p class="lead">The model\'s shell commands run in a sandbox. When one needs a host or a path the sandbox does not allow, tau asks: every attached UI shows the request above the editor, naming the command, its call and its agent, and one key answers it.</p>',
    '<h2 id="keys">The keys and what each grant lasts</h2>',
    para(ctx, page, "Each choice says on its own line what it allows and for how long; here they are as the UI words them. Nothing is granted beyond the session, and a request closes on its own when its command ends or is cancelled, a new prompt comes, or the policy changes (a key pressed as it closes is not typed into your prompt)."),
    '<table class="summary approvals"><thead><tr><th>request</th><th>choices</th></tr></thead><tbody>',
    ...input.approvalChoices.map((c) => `<tr><td>${esc(c.request)}</td><td>${c.labels.map((l) => `<code>${esc(l)}</code>`).join("<br>")}</td></tr>`),
    "</tbody></table>",
    '<h2 id="without-asking">Without asking</h2>',
    para(
      ctx,
      page,
      "`:sandbox network allow add HOST` and `:sandbox filesystem allow-write add PATH` grant for the session without a request; the same keys in `sandbox.yaml` keep them. An automatic reviewer can answer requests before you are asked (`:sandbox classifier provider/model`). `tau run` asks nobody: a request is refused at once with the command that would allow it.",
    ),
    '<h2 id="rules">The rules</h2>',
    recordSection(ctx, page, "SPEC-sandbox", "Approvals"),
  ].join("\n");
}

export function troubleshootingPage(ctx: GuideContext): string {
  const page = GUIDE_PAGES.troubleshooting;
  const err = (code: string) => link(page, "errors.html", code, fragment("error", code));
  const item = (title: string, text: string, codes: readonly string[] = []) =>
    `<dt>${esc(title)}</dt><dd>${renderInline(ctx.md, text, ctx.env(page))}${codes.length > 0 ? ` <span class="muted">(${codes.map(err).join(", ")})</span>` : ""}</dd>`;
  return [
    "<h1>Troubleshooting</h1>",
    '<p class="lead">What usually goes wrong in the first hour, what tau says when it does, and what fixes it. Every message ends with its code; the errors page says what each means.</p>',
    '<dl class="troubles">',
    item("The sandbox is blocked", "The programs it needs are missing: `bin/setup` installs bubblewrap, socat and ripgrep; `:sandbox doctor` (or `tau doctor` in the UI) names what is missing. Until then no model command runs unsandboxed; `--no-sandbox` runs them with your full rights."),
    item("The answer is an offline demo", "No model is configured: set `OPENAI_API_KEY` (OpenAI's endpoint), or `OPENAI_BASE_URL` and `OPENAI_MODEL` for another OpenAI-compatible one, or add one with `tau provider add NAME --base-url URL`."),
    item("The provider could not be reached", "The message names the endpoint it tried: check the URL and that the server is up (a local server listens where its docs say). Behind a proxy, set `HTTPS_PROXY`; a private certificate authority goes in `NODE_EXTRA_CA_CERTS`.", ["TAU-E0408"]),
    item("The key is refused", "An HTTP 401 or 403 names the endpoint: the key is for another server, expired or mistyped. `tau provider add NAME --force` replaces a profile's key; an environment key is `OPENAI_API_KEY`.", ["TAU-E0301", "TAU-E0406"]),
    item("A model is refused", "The endpoint does not list it; the message gives close matches, and `:model` lists what it serves.", ["TAU-E0117", "TAU-E0309"]),
    item("A key file is refused", "A key file must be yours alone: `chmod 600` the file the message names.", ["TAU-E0202"]),
    item("The configuration is refused", "The message names the file, the line and the key; `tau init` writes commented samples.", ["TAU-E0201"]),
    item("The session's daemon went away", "The message names its log (`daemon.log` in the session's folder). Nothing acknowledged is lost: `tau resume ID` starts the session again, and `tau session list --all` lists saved sessions.", ["TAU-E0402"]),
    item("`tau` says it is not built", "A checkout needs `npm ci` (or `bin/setup`), which builds it.", ["TAU-E0404"]),
    item("Context and cost are not shown", "tau knows the context window and prices of well-known models; for others, `model_info` in `harness.yaml` tells it."),
    "</dl>",
    `<p>Every code, exit status and the way a <code>tau run</code> ends are on ${link(page, "errors.html", "Errors")}; how sessions are kept and resumed, on ${link(page, GUIDE_PAGES.sessions, "Sessions")}; approvals, on ${link(page, GUIDE_PAGES.approvals, "Approvals")}.</p>`,
  ].join("\n");
}

export function editorsPage(ctx: GuideContext): string {
  const page = GUIDE_PAGES.editors;
  const json = (lines: readonly string[]) => `<pre><code>${lines.map((l) => esc(l)).join("\n")}</code></pre>`;
  return [
    "<h1>Editors</h1>",
    '<p class="lead">Editors that speak the Agent Client Protocol (ACP) — Zed, JetBrains IDEs, and plugins for Neovim and Emacs — can use tau as their agent: they start <code>tau acp</code> and talk to it on its standard input and output. Each conversation is a tau session in the folder the editor opens, saved like any other.</p>',
    commandBrief(ctx, page, "acp"),
    '<h2 id="zed">Zed</h2>',
    para(ctx, page, "In Zed's `settings.json`, add tau under `agent_servers`, then pick it in the agent panel:"),
    json(['"agent_servers": {', '  "tau": {', '    "command": "tau",', '    "args": ["acp"]', "  }", "}"]),
    '<h2 id="jetbrains">JetBrains IDEs</h2>',
    para(ctx, page, "In the AI Assistant's `acp.json` (Settings → Tools → AI Assistant → Agents → Add custom agent):"),
    json(['{', '  "agent_servers": {', '    "tau": { "command": "tau", "args": ["acp"] }', "  }", "}"]),
    '<h2 id="neovim-emacs">Neovim and Emacs</h2>',
    para(ctx, page, "Plugins that speak ACP (CodeCompanion and avante.nvim for Neovim, agent-shell for Emacs) take a command to start: give them `tau acp`. Use the full path of `bin/tau.cjs` when `tau` is not on the editor's PATH."),
    '<h2 id="what-you-get">What the editor shows</h2>',
    para(ctx, page, "The answer and the model's reasoning stream as they come; each tool call shows its kind, what it runs or touches, the file it names, and its result; an edit shows its diff. Cancelling in the editor cancels the prompt. Loading an earlier conversation replays it first. When the sandbox would ask (a host, a path outside the project), the editor asks you, with tau's own choices: once, for the rest of the session, or no."),
    '<h2 id="rules">The rules</h2>',
    recordSection(ctx, page, "SPEC-acp", "Rules"),
  ].join("\n");
}

export function mcpPage(ctx: GuideContext): string {
  const page = GUIDE_PAGES.mcp;
  const yaml = (lines: readonly string[]) => `<pre><code>${lines.map((l) => esc(l)).join("\n")}</code></pre>`;
  return [
    "<h1>MCP servers</h1>",
    '<p class="lead">Model Context Protocol servers give the model more tools: a local server on stdio, or a remote one over Streamable HTTP. tau offers each server\'s tools as <code>mcp__SERVER__TOOL</code> — the names Claude Code users know — under the same role policy as its own tools. A local server runs inside the sandbox; a slow one never holds up the session.</p>',
    '<h2 id="add">Adding a server</h2>',
    commandBrief(ctx, page, "mcp:add"),
    para(ctx, page, "Or write the entry yourself, under `mcp_servers` in `harness.yaml` (a trusted project may bring its own in `.tau/mcp.yaml`):"),
    yaml([
      "mcp_servers:",
      "  files:",
      '    command: npx',
      '    args: ["-y", "@modelcontextprotocol/server-filesystem", "/path/to/project"]',
      "  docs:",
      "    url: https://mcp.example.com/mcp",
      "    ask: writes            # ask before each call of a tool that does not say it only reads",
      "  search:",
      "    command: my-search-server",
      '    allowed_hosts: ["api.search.example"]   # the sandbox lets it reach this host too',
    ]),
    '<h2 id="migrate">Coming from Claude Code, Cursor, Codex or opencode</h2>',
    para(ctx, page, "`tau mcp import` reads their configuration — `.mcp.json` and `~/.claude.json` (Claude Code, Cursor), `~/.codex/config.toml` (Codex), `opencode.json` (opencode) — and writes tau's entries, naming anything it could not take:"),
    commandBrief(ctx, page, "mcp:import"),
    recordSection(ctx, page, "SPEC-mcp", "Migrating an `.mcp.json`"),
    '<h2 id="sign-in">Remote servers that ask you to sign in</h2>',
    commandBrief(ctx, page, "mcp:login"),
    para(ctx, page, "The sign-in is kept for that exact server address only, refreshed when it expires, and never sent anywhere else. A session never opens a browser: a server that needs a sign-in says to run `tau mcp login NAME`."),
    '<h2 id="state">Watching them</h2>',
    para(ctx, page, "The status line counts the servers that are ready (`mcp 2/3 (1 failed)`); `:mcp` shows each one's state, its last error, what it said and its tools. A crashed server is started again; one that keeps failing stays listed, failed, with its error."),
    '<h2 id="sandbox">The sandbox, and asking before a call</h2>',
    recordSection(ctx, page, "SPEC-mcp", "The sandbox"),
    recordSection(ctx, page, "SPEC-mcp", "Asking before a call"),
  ].join("\n");
}

export function webPage(ctx: GuideContext): string {
  const page = GUIDE_PAGES.web;
  const yaml = (lines: readonly string[]) => `<pre><code>${lines.map((l) => esc(l)).join("\n")}</code></pre>`;
  return [
    "<h1>Web search and fetch</h1>",
    '<p class="lead">Give the model <code>web_search</code> (through Exa or Parallel) and <code>web_fetch</code> (a page as markdown, fetched by tau itself or through either service). Every result reaches the model framed as untrusted web content, bounded, and a page can only be fetched from a host the sandbox would let a command reach.</p>',
    '<h2 id="enable">Turning it on</h2>',
    para(ctx, page, "Add `web:` to `harness.yaml`. Without `search`, only `web_fetch` is offered, and it needs no key:"),
    yaml(["web:", "  search: exa          # or parallel; leave it out for fetch only", "  fetch: direct        # the default; or exa, parallel"]),
    para(ctx, page, "Keep each service's key in a file only you can read (or in `TAU_SECRET_WEB_EXA` / `TAU_SECRET_WEB_PARALLEL` where you start tau). The key never appears in a command line, a log or a tool result:"),
    terminal(["$ install -m 700 -d ~/.config/tau/secrets", "$ (umask 077; cat > ~/.config/tau/secrets/web-exa)   # paste the key, then Ctrl-D"]),
    recordSection(ctx, page, "SPEC-web", "Configuration"),
    '<h2 id="tools">The tools</h2>',
    recordSection(ctx, page, "SPEC-web", "Tools"),
    '<h2 id="hosts">Which pages it may fetch</h2>',
    para(ctx, page, "A page's host is judged as a sandboxed command's connection is: allowed by `sandbox.yaml`'s `network.allowed_domains`, refused by `network.denied_domains`, and asked about otherwise (the approvals page shows the keys). `tau run` has nobody to ask and refuses such a host, naming the fix."),
    recordSection(ctx, page, "SPEC-web", "Hosts"),
    '<h2 id="frame">What the model sees</h2>',
    recordSection(ctx, page, "SPEC-web", "The frame"),
  ].join("\n");
}

export function swarmPage(ctx: GuideContext): string {
  const page = GUIDE_PAGES.swarm;
  const yaml = (lines: readonly string[]) => `<pre><code>${lines.map((l) => esc(l)).join("\n")}</code></pre>`;
  return [
    "<h1>Running a swarm of three workers</h1>",
    '<p class="lead">When one machine is not enough, run a tau worker on each of several machines and coordinate them from one place. Each worker is an ordinary tau session with the <code>swarm</code> extension; it links over Iroh (QUIC, peer to peer) to the one coordinator whose key it pins, and takes the coordinator\'s prompts into its agent as that extension\'s prompts. <code>tau swarm serve</code> is the coordinator.</p>',
    '<h2 id="coordinator-key">1. The coordinator\'s key and the workers\' credentials</h2>',
    para(ctx, page, "On the coordinator's machine, make its key (kept in `secrets/swarm-coordinator`, never printed) and note the endpoint id it prints; then one credential per worker:"),
    terminal(["$ tau swarm key swarm-coordinator", "3f1c…e9a0            # the coordinator's endpoint id: the workers pin it", "$ tau swarm credential w1", "$ tau swarm credential w2", "$ tau swarm credential w3"]),
    commandBrief(ctx, page, "swarm:credential"),
    '<h2 id="workers">2. Each worker: its key, its credential, its entry</h2>',
    para(ctx, page, "On each worker machine, make the worker's own key and note its endpoint id (the coordinator admits only the ids it is given), and copy that worker's credential file from the coordinator's `secrets/` into the worker's `secrets/` as `swarm-credential` (mode 0600):"),
    terminal(["$ tau swarm key swarm-key", "8b27…41d2            # this worker's endpoint id", "$ scp coordinator:.config/tau/secrets/swarm-worker-w1 ~/.config/tau/secrets/swarm-credential"]),
    para(ctx, page, "Then add the extension to the worker's `harness.yaml` (its name, the coordinator's endpoint id, and where to look for it):"),
    yaml([
      "extensions:",
      "  - name: swarm",
      "    command: [tau, ext, swarm]",
      "    secrets: [swarm-credential, swarm-key]",
      "    config:",
      "      worker: w1",
      "      coordinator: 3f1c…e9a0          # 64 hex digits: the only peer this worker talks to",
      '      addresses: ["192.0.2.10:7420"]   # hints only; the id is what is checked',
      "      credential_secret: swarm-credential",
      "      key_secret: swarm-key",
      "      max_commands: 4096              # remembered until restart; a full table refuses",
    ]),
    '<h2 id="serve">3. Start the coordinator, then the workers</h2>',
    terminal(["$ tau swarm serve --bind 0.0.0.0:7420 \\", "    --worker w1=8b27…41d2 --worker w2=c90e…7f13 --worker w3=51aa…0bc4"]),
    commandBrief(ctx, page, "swarm:serve"),
    para(ctx, page, "On each worker, start tau in its project (`tau`): the session's first agent takes the coordinator's prompts. The coordinator prints `admitted` for each worker, with the incarnation of its process."),
    '<h2 id="prompts">4. Prompts, results and questions</h2>',
    para(ctx, page, "Type on the coordinator's standard input, one command a line; every happening comes back as one JSON line:"),
    terminal(["prompt w1 Run the test suite and fix what fails", 'prompt w2 Update the changelog for 2.4', '{"kind":"update","worker":"w1","update":{"seq":2,"kind":"result","command_id":"c1-…","text":"All 212 tests pass…"}}', '{"kind":"update","worker":"w2","update":{"seq":2,"kind":"blocker","blocker_id":"b6c0…","text":"Which release date?"}}', "answer w2 b6c0… May 12"]),
    para(ctx, page, "A worker's agent asks the coordinator with its `swarm_ask` tool when it cannot go on; the answer arrives as a new prompt. `tau swarm status` shows each worker, connected or not, its incarnation, its commands and open questions."),
    commandBrief(ctx, page, "swarm:status"),
    '<h2 id="trust">What the coordinator can and cannot do</h2>',
    recordSection(ctx, page, "SPEC-swarm", "Trust"),
    '<h2 id="restarts">Restarts</h2>',
    recordSection(ctx, page, "SPEC-swarm", "Coordinator"),
  ].join("\n");
}

export function handoffPage(ctx: GuideContext): string {
  const page = GUIDE_PAGES.handoff;
  const yaml = (lines: readonly string[]) => `<pre><code>${lines.map((l) => esc(l)).join("\n")}</code></pre>`;
  return [
    "<h1>Handing a session off</h1>",
    '<p class="lead">When a session\'s context window fills up, a handoff continues the work in a fresh session instead of compacting this one: the model writes a dossier of where things stand, and a new session, linked to this one, starts by reading it. Prompts you type meanwhile are held and follow the dossier, unchanged and in order.</p>',
    '<h2 id="enable">Turning it on</h2>',
    para(ctx, page, "The handoff is an extension, off until you list it under `extensions:` in `harness.yaml`; a new session picks it up. Without it, `:handoff` says how to turn it on."),
    yaml([
      "extensions:",
      "  - name: handoff",
      "    kind: tool",
      "    command: [tau, ext, handoff]",
      "    config:",
      "      defer_prompts_from: writing         # or request: hold your prompts from the start",
      "      delete_handoff_after_reading: true  # the new session deletes the dossier once read",
      "      auto_percent: 0                     # e.g. 75: start a handoff by itself at 75 % of the context",
    ]),
    '<h2 id="start">Starting one</h2>',
    para(ctx, page, "Type `:handoff` (or ask the model in your own words: it may start one only when you asked). Nothing asks you to confirm. The model is asked to get to a safe point, fetch the dossier template — which also reserves the dossier's file and gives it a one-time Finish id — write the dossier into that file with its usual file tools, and call Finish. Once the model's turn has ended, tau creates the new session. The interactive UI follows the work into it by itself; `tau session list --all` shows which session continues which. `:handoff status` shows where a handoff stands (`requested`, `writing`, `cutover`) and how full the context is; `:handoff cancel` stops one, even after Finish, until the new session is being created. If the model does not get to it, it is reminded once."),
    '<h2 id="your-prompts">What happens to what you type</h2>',
    para(ctx, page, "From the moment the model has fetched the template (with `defer_prompts_from: request`, from the start), what you type is held instead of sent, and the new session receives it after the pointer to the dossier, exactly as you typed it, in order. `:new`, `:fork` and compaction wait meanwhile. A handoff that is cancelled or fails sends the held prompts to this session's agent instead, in order. Once the new session is being created, a prompt you type goes to this session's agent, with a note saying so."),
    '<h2 id="dossier">The dossier file</h2>',
    para(ctx, page, "The dossier lives in `.tau/handoff_<session id>.md` in your project (readable by you alone). tau creates it empty when the model fetches the template; the model then writes it — the one file of `.tau/` the sandbox lets its file tools write. An existing file of that name is never overwritten or read: the model is told which file is in the way, and the handoff waits until you move it. Finish only checks that the file exists and is not empty; tau never reads or judges the dossier. A handoff that is cancelled removes the file it created (once the model's current turn is over). The new session's first message gives the file's full path and asks the model to read it completely and then delete exactly that file; with `delete_handoff_after_reading: false` it is kept. tau does not add it to your ignore files; keep `.tau/handoff_*.md` out of version control yourself. The dossier is a record, not a permission: the new session has exactly the tools and sandbox of your configuration, none of the grants you gave this one."),
    '<h2 id="context">When the context is nearly full</h2>',
    para(ctx, page, "If the model keeps working while a handoff waits for it, and a turn ends with the context at 90 % or more (`critical_percent`), it is told once, urgently, to stop, fetch the template if it has not yet, finish the dossier and call Finish. Nothing is aborted: it is a request. With `auto_percent` set, a handoff starts by itself at that level, and a second try only at `critical_percent`. A new session can hand off again in turn."),
    '<h2 id="recover">After a crash</h2>',
    para(ctx, page, "While a handoff runs, what it holds is kept in a recovery file under the configuration folder's `handoff/recovery/`, so nothing you typed is lost if tau, the new session or the machine stops. The file stays until the new session's first turn has completed; the new session then deletes it. If that first turn fails, the file is kept and the new session says so. Resume the old session (`tau resume`) and type `:handoff recover` to see what was left, then `:handoff recover resume` to finish it: the new session is created (or completed, if it was under way) with your held prompts, or they are sent to this session's agent — each exactly once — and the unused dossier file is removed. `:handoff recover abandon` deletes the recovery file instead. Nothing is replayed without you asking."),
    '<h2 id="templates">Changing what the model is asked</h2>',
    recordSection(ctx, page, "SPEC-handoff", "Templates"),
  ].join("\n");
}

export const GUIDE_STYLE = `
pre.yaml { margin: 0; padding: 0.35rem 0.5rem; font-size: 0.82rem; }
table.config-keys { width: 100%; table-layout: fixed; }
table.config-keys th:nth-child(1) { width: 20%; }
table.config-keys th:nth-child(2) { width: 13%; }
table.config-keys th:nth-child(3) { width: 9%; }
table.config-keys th:nth-child(5) { width: 26%; }
table.config-keys td { overflow-wrap: anywhere; }
kbd { font-family: var(--mono); font-size: 0.85em; padding: 0.05em 0.4em; border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 4px; background: var(--panel); white-space: nowrap; }
div.quoted { border-left: 4px solid var(--line); padding: 0 1rem; }
section.users, section.contributors { margin-top: 1.5rem; }
`;
