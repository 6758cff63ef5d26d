// The CLI's command help, read from the oclif command classes' static metadata (no process is run,
// so the page is the same on every machine).
import { esc, fragment } from "./html.js";

export interface FlagHelp {
  name: string;
  char: string;
  type: string;
  description: string;
  required: boolean;
  defaultValue: string;
  options: string[];
}

export interface ArgHelp {
  name: string;
  description: string;
  required: boolean;
}

export interface CommandHelp {
  id: string;
  words: string;
  usage: string;
  summary: string;
  description: string;
  flags: FlagHelp[];
  args: ArgHelp[];
  examples: string[];
}

type Bag = Record<string, unknown>;

function bag(v: unknown): Bag {
  return typeof v === "object" && v !== null ? (v as Bag) : typeof v === "function" ? (v as unknown as Bag) : {};
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function fill(text: string, words: string): string {
  return text.replace(/<%=\s*config\.bin\s*%>/g, "tau").replace(/<%=\s*command\.id\s*%>/g, words);
}

export function readCommands(commands: Record<string, unknown>): CommandHelp[] {
  const out: CommandHelp[] = [];
  for (const id of Object.keys(commands).sort()) {
    const cls = bag(commands[id]);
    if (cls.hidden === true) continue;
    const words = id.split(":").join(" ");
    const flags: FlagHelp[] = [];
    const flagBag = bag(cls.flags);
    for (const name of Object.keys(flagBag).sort()) {
      const f = bag(flagBag[name]);
      if (f.hidden === true) continue;
      const def = f.default;
      flags.push({
        name,
        char: str(f.char),
        type: f.type === "boolean" ? "boolean" : "value",
        description: fill(str(f.description) || str(f.summary), words),
        required: f.required === true,
        defaultValue: def === undefined || typeof def === "function" ? "" : JSON.stringify(def),
        options: Array.isArray(f.options) ? f.options.map(String) : [],
      });
    }
    const args: ArgHelp[] = [];
    const argBag = bag(cls.args);
    for (const name of Object.keys(argBag)) {
      const a = bag(argBag[name]);
      args.push({ name, description: str(a.description), required: a.required === true });
    }
    const examples = (Array.isArray(cls.examples) ? cls.examples : []).map((e) => {
      if (typeof e === "string") return fill(e, words);
      const eb = bag(e);
      return fill(str(eb.command), words);
    });
    const usageParts = [
      `tau ${words}`,
      ...args.map((a) => (a.required ? a.name.toUpperCase() : `[${a.name.toUpperCase()}]`)),
      ...flags.map((f) => {
        const v = f.type === "boolean" ? `--${f.name}` : `--${f.name} <value>`;
        return f.required ? v : `[${v}]`;
      }),
    ];
    out.push({
      id,
      words,
      usage: usageParts.join(" "),
      summary: fill(str(cls.summary), words),
      description: fill(str(cls.description), words),
      flags,
      args,
      examples,
    });
  }
  return out;
}

export function renderCli(commands: CommandHelp[], inline: (md: string) => string): string {
  const parts: string[] = [
    "<h1>Command-line help</h1>",
    "<p>Every command of the <code>tau</code> CLI, read from the command classes themselves. <code>tau --help</code> and <code>tau &lt;command&gt; --help</code> print the same text in a terminal.</p>",
    '<table class="summary"><thead><tr><th>command</th><th>summary</th></tr></thead><tbody>',
    ...commands.map(
      (c) => `<tr><td><a href="#${esc(fragment("cmd", c.id))}"><code>tau ${esc(c.words)}</code></a></td><td>${inline(c.summary)}</td></tr>`,
    ),
    "</tbody></table>",
  ];
  for (const c of commands) {
    parts.push(`<section class="command" id="${esc(fragment("cmd", c.id))}">`);
    parts.push(`<h2><code>tau ${esc(c.words)}</code></h2>`);
    if (c.summary) parts.push(`<p>${inline(c.summary)}</p>`);
    if (c.description) parts.push(`<p>${inline(c.description)}</p>`);
    parts.push(`<h3>Usage</h3><pre class="terminal"><code>$ ${esc(c.usage)}</code></pre>`);
    if (c.args.length > 0) {
      parts.push("<h3>Arguments</h3><dl class=\"flags\">");
      for (const a of c.args) parts.push(`<dt><code>${esc(a.name.toUpperCase())}</code>${a.required ? " (required)" : ""}</dt><dd>${inline(a.description)}</dd>`);
      parts.push("</dl>");
    }
    if (c.flags.length > 0) {
      parts.push('<h3>Flags</h3><dl class="flags">');
      for (const f of c.flags) {
        const name = `${f.char ? `-${f.char}, ` : ""}--${f.name}${f.type === "boolean" ? "" : " <value>"}`;
        const extra = [
          f.required ? "required" : "",
          f.defaultValue ? `default ${f.defaultValue}` : "",
          f.options.length > 0 ? `one of ${f.options.join(", ")}` : "",
        ].filter((x) => x !== "");
        parts.push(
          `<dt><code>${esc(name)}</code></dt><dd>${inline(f.description)}${extra.length > 0 ? ` <span class="muted">(${esc(extra.join("; "))})</span>` : ""}</dd>`,
        );
      }
      parts.push("</dl>");
    }
    if (c.examples.length > 0) {
      parts.push(`<h3>Examples</h3><pre class="terminal"><code>${c.examples.map((e) => `$ ${esc(e)}`).join("\n")}</code></pre>`);
    }
    parts.push("</section>");
  }
  return parts.join("\n");
}
