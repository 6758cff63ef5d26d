// Reads handwritten/ syntax only (no type checking, no dependency resolution): every site that
// names an event by a string literal, every relative import, and the declared consumer table.
// Imports come from TypeScript's import pre-processor, which scans without building a tree; only
// the files that spell an event name and the text of a site are parsed, into one ts-morph project
// (under a third of handwritten/ by size). Call sites are
// recognised by the method name and the event name they spell, so type arguments
// (`publish<"x">("x", …)`) and argument order do not matter.
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { ts as T } from "ts-morph";
import type { Problems } from "../errors.js";

// Loaded with require: an ESM import of this CommonJS bundle would first lex all of it for exports.
const { Project, ts } = createRequire(import.meta.url)("ts-morph") as typeof import("ts-morph");

/** How a site uses the event it names. */
export type SiteKind = "publish" | "direct" | "consume" | "subscribe";

export interface EventSite {
  readonly kind: SiteKind;
  readonly event: string;
  /** Path inside handwritten/, `/`-separated (`harness/tools.ts`). */
  readonly rel: string;
  /** `path:line`, the path relative to the reported root. */
  readonly where: string;
  /** What was called, for messages (`this.port.publish`, `{name, data}`). */
  readonly via: string;
  /** The declared consumer a `consume(consumer, event, handler)` site registers for. */
  readonly consumer?: string;
}

export interface ImportSite {
  readonly rel: string;
  readonly where: string;
  readonly specifier: string;
  /** Absolute path the specifier points at. */
  readonly target: string;
}

export interface ConsumerDeclaration {
  readonly consumer: string;
  readonly event: string;
  readonly successors: readonly string[];
  /** `path:line` of the event's entry. */
  readonly where: string;
}

export interface TreeScan {
  readonly files: number;
  readonly sites: readonly EventSite[];
  readonly imports: readonly ImportSite[];
  /** Undefined when the tree has no harness/consumers.ts. */
  readonly consumers: readonly ConsumerDeclaration[] | undefined;
  readonly consumersFile: string;
}

export const CONSUMERS_FILE = "harness/consumers.ts";

const CALLS: ReadonlyMap<string, SiteKind> = new Map<string, SiteKind>([
  ["publish", "publish"],
  ["publishFromPeer", "publish"],
  ["publishHarness", "publish"],
  ["emit", "publish"],
  ["sendDirected", "direct"],
  ["direct", "direct"],
  ["directToInstance", "direct"],
  ["onCommitted", "consume"],
  // The harness's ConsumerRegistry: `consume("tools", "tool.request", handler)`.
  ["consume", "consume"],
  ["on", "subscribe"],
  ["onDirect", "subscribe"],
  // A wait for the direct answer to a request, by the answer's event name.
  ["directed", "subscribe"],
  // Selector lists (`subscribe(["a.b"], ["c.d", "e.*"])`): a full event name in them is checked.
  ["subscribe", "subscribe"],
]);

/** What an event name looks like: `family.name` in lowercase words. */
export const EVENT_SHAPE = /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/;

/** A file that spells no quoted event name has no event site: its syntax tree is not needed. */
const MAY_NAME_AN_EVENT = /["'`][a-z][a-z0-9_]*\.[a-z][a-z0-9_]*["'`]/;

/**
 * Nor does one with no call of a site's name (type arguments allowed), no `message: "direct"` and
 * no `name: "x.y"` property: what readCall and readObject look for, as text.
 */
const MAY_HOLD_A_SITE = new RegExp(
  [
    `\\b(?:${[...CALLS.keys()].join("|")})\\s*(?:<[^>(]*>)?\\s*\\(`,
    `\\bmessage["']?\\s*:\\s*["'\`]direct["'\`]`,
    `\\bname["']?\\s*:\\s*["'\`][a-z][a-z0-9_]*\\.[a-z]`,
  ].join("|"),
);

/**
 * Scans every `.ts` file under `dir` (a handwritten/ tree). Paths in messages are relative to
 * `reportRoot` (the repository root, or whatever holds a fixture tree).
 */
export function scanTree(dir: string, reportRoot: string, problems: Problems, options: { readonly parseEveryFile?: boolean } = {}): TreeScan {
  const project = new Project({
    skipAddingFilesFromTsConfig: true,
    skipFileDependencyResolution: true,
    skipLoadingLibFiles: true,
    compilerOptions: { noLib: true, allowJs: false, noResolve: true },
  });
  const sites: EventSite[] = [];
  const imports: ImportSite[] = [];
  let consumers: ConsumerDeclaration[] | undefined;
  const consumersFile = toSlash(relative(reportRoot, join(dir, CONSUMERS_FILE)));
  const paths = listTs(dir);
  for (const path of paths) {
    const text = readFileSync(path, "utf8");
    const rel = toSlash(relative(dir, path));
    const display = toSlash(relative(reportRoot, path));
    const lineOf = lineFinder(text);
    for (const f of ts.preProcessFile(text, true, true).importedFiles) {
      if (!f.fileName.startsWith(".")) continue; // packages and node: built-ins are not folders of tau
      imports.push({ rel, where: `${display}:${lineOf(f.pos)}`, specifier: f.fileName, target: resolve(dirname(path), f.fileName) });
    }
    const skip = rel !== CONSUMERS_FILE && !(MAY_NAME_AN_EVENT.test(text) && MAY_HOLD_A_SITE.test(text));
    if (skip && options.parseEveryFile !== true) continue;
    const node = project.createSourceFile(path, text, { overwrite: true }).compilerNode;
    const at = (n: T.Node) => `${display}:${lineOf(n.getStart(node))}`;
    const visit = (n: T.Node): void => {
      if (ts.isCallExpression(n)) readCall(n, rel, at, sites);
      else if (ts.isObjectLiteralExpression(n)) readObject(n, rel, at, sites);
      ts.forEachChild(n, visit);
    };
    visit(node);
    if (rel === CONSUMERS_FILE) consumers = readConsumers(node, at, consumersFile, problems);
  }
  return { files: paths.length, sites, imports, consumers, consumersFile };
}

/** Every `.ts` file under a folder (not `.d.ts`), sorted, so messages come in a stable order. */
function listTs(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** 1-based line of a character offset. */
function lineFinder(text: string): (pos: number) => number {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return (pos) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] ?? 0) <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

function toSlash(p: string): string {
  return p.split(sep).join("/");
}

function calleeName(e: T.Expression): string | undefined {
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  if (ts.isIdentifier(e)) return e.text;
  return undefined;
}

function readCall(n: T.CallExpression, rel: string, at: (n: T.Node) => string, sites: EventSite[]): void {
  const name = calleeName(n.expression);
  const kind = name === undefined ? undefined : CALLS.get(name);
  if (kind === undefined) return;
  const via = n.expression.getText();
  if (name === "consume" && n.arguments.length >= 3) {
    const [consumer, event] = n.arguments;
    if (!consumer || !ts.isStringLiteralLike(consumer) || !event) return;
    const push = (text: string, node: T.Node) => {
      if (EVENT_SHAPE.test(text)) sites.push({ kind, event: text, rel, where: at(node), via, consumer: consumer.text });
    };
    if (ts.isStringLiteralLike(event)) push(event.text, event);
    else if (ts.isIdentifier(event)) {
      const bound = resolveIdentifier(event);
      if (Array.isArray(bound)) for (const b of bound) push(b.text, n);
    }
    return;
  }
  if (name === "subscribe") {
    for (const arg of n.arguments.slice(0, 2)) readSelectors(unwrap(arg), rel, at, via, sites);
    return;
  }
  // The event is the first of the first two arguments that spells one: directed sends take a
  // connection first, the others take the name first.
  for (const arg of n.arguments.slice(0, 2)) {
    if (ts.isStringLiteralLike(arg)) {
      if (EVENT_SHAPE.test(arg.text)) sites.push({ kind, event: arg.text, rel, where: at(arg), via });
      return; // a literal that is not an event name ("error", "*"): not an event site
    }
    // A parameter is a forwarder's name (its callers spell the event) or a directed send's
    // connection: either way the next argument may still be the literal.
    if (ts.isIdentifier(arg)) {
      const bound = resolveIdentifier(arg);
      if (bound !== undefined && bound !== "parameter" && bound.length > 0 && bound.every((b) => EVENT_SHAPE.test(b.text))) {
        for (const b of bound) sites.push({ kind, event: b.text, rel, where: at(n), via });
        return;
      }
    }
  }
}

/** A selector list, or `{historical, live}` lists: the entries that spell a whole event name (not `*` or `agent.*`). */
function readSelectors(e: T.Expression, rel: string, at: (n: T.Node) => string, via: string, sites: EventSite[]): void {
  const lists = ts.isObjectLiteralExpression(e) ? [property(e, "historical"), property(e, "live")] : [e];
  for (const list of lists) {
    if (!list || !ts.isArrayLiteralExpression(list)) continue;
    for (const el of list.elements) {
      const x = unwrap(el);
      if (ts.isStringLiteralLike(x) && EVENT_SHAPE.test(x.text)) sites.push({ kind: "subscribe", event: x.text, rel, where: at(x), via });
    }
  }
}

/** `{name: "x.y", data}` is an event; inside `{message: "direct", payload: {event: …}}` a directed one. */
function readObject(n: T.ObjectLiteralExpression, rel: string, at: (n: T.Node) => string, sites: EventSite[]): void {
  const message = property(n, "message");
  if (message && ts.isStringLiteralLike(message) && message.text === "direct") readDirectMessage(n, rel, at, sites);
  const name = property(n, "name");
  if (!name || !ts.isStringLiteralLike(name) || !EVENT_SHAPE.test(name.text) || !hasProperty(n, "data")) return;
  const direct = directMessageAround(n);
  sites.push({ kind: direct ? "direct" : "publish", event: name.text, rel, where: at(name), via: direct ? '{message: "direct"}' : "{name, data}" });
}

/** A direct message whose event name is not a literal: a parameter forwards, a variable is read as the function's literals. */
function readDirectMessage(n: T.ObjectLiteralExpression, rel: string, at: (n: T.Node) => string, sites: EventSite[]): void {
  const payload = property(n, "payload");
  const event = payload && ts.isObjectLiteralExpression(payload) ? property(payload, "event") : undefined;
  const nameNode = event && ts.isObjectLiteralExpression(event) ? nameOf(event) : undefined;
  if (!nameNode || !ts.isIdentifier(nameNode)) return; // a literal is read as an event literal
  const bound = resolveIdentifier(nameNode);
  if (bound === "parameter") return;
  const names = bound ?? functionLiterals(n);
  for (const b of names) {
    if (EVENT_SHAPE.test(b.text)) sites.push({ kind: "direct", event: b.text, rel, where: at(n), via: '{message: "direct"}' });
  }
}

function nameOf(o: T.ObjectLiteralExpression): T.Expression | undefined {
  for (const p of o.properties) {
    if (ts.isShorthandPropertyAssignment(p) && p.name.text === "name") return p.name;
    if (ts.isPropertyAssignment(p) && propertyName(p.name) === "name") return p.initializer;
  }
  return undefined;
}

function property(o: T.ObjectLiteralExpression, key: string): T.Expression | undefined {
  for (const p of o.properties) {
    if (ts.isPropertyAssignment(p) && propertyName(p.name) === key) return unwrap(p.initializer);
  }
  return undefined;
}

function hasProperty(o: T.ObjectLiteralExpression, key: string): boolean {
  return o.properties.some((p) => (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) && propertyName(p.name) === key);
}

function propertyName(n: T.PropertyName): string | undefined {
  if (ts.isIdentifier(n) || ts.isStringLiteral(n)) return n.text;
  return undefined;
}

/** Whether an event literal is the `payload.event` of a `{message: "direct"}` literal. */
function directMessageAround(event: T.ObjectLiteralExpression): boolean {
  const eventProp = event.parent;
  if (!eventProp || !ts.isPropertyAssignment(eventProp) || propertyName(eventProp.name) !== "event") return false;
  const payload = eventProp.parent;
  const payloadProp = payload?.parent;
  if (!payloadProp || !ts.isPropertyAssignment(payloadProp) || propertyName(payloadProp.name) !== "payload") return false;
  const message = payloadProp.parent;
  if (!message || !ts.isObjectLiteralExpression(message)) return false;
  const m = property(message, "message");
  return m !== undefined && ts.isStringLiteralLike(m) && m.text === "direct";
}

function unwrap(e: T.Expression): T.Expression {
  let x = e;
  while (ts.isAsExpression(x) || ts.isSatisfiesExpression(x) || ts.isParenthesizedExpression(x) || ts.isTypeAssertionExpression(x)) x = x.expression;
  return x;
}

interface Literal {
  readonly text: string;
  readonly node: T.Node;
}

/**
 * What an identifier holds, read from the syntax around it: the string literals of the array a
 * `for (const x of [...])` walks, a `const x = "..."`, or "parameter" for a function's parameter.
 */
function resolveIdentifier(id: T.Identifier): Literal[] | "parameter" | undefined {
  for (let n: T.Node | undefined = id.parent; n; n = n.parent) {
    if (ts.isForOfStatement(n) && ts.isVariableDeclarationList(n.initializer)) {
      const decl = n.initializer.declarations.find((d) => ts.isIdentifier(d.name) && d.name.text === id.text);
      if (decl) return stringsOf(unwrap(n.expression));
    }
    if (ts.isFunctionLike(n) && n.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === id.text)) return "parameter";
    if (ts.isBlock(n) || ts.isSourceFile(n) || ts.isModuleBlock(n)) {
      for (const s of n.statements) {
        if (!ts.isVariableStatement(s)) continue;
        for (const d of s.declarationList.declarations) {
          if (ts.isIdentifier(d.name) && d.name.text === id.text && d.initializer) {
            const init = unwrap(d.initializer);
            return ts.isStringLiteralLike(init) ? [{ text: init.text, node: init }] : undefined;
          }
        }
      }
    }
  }
  return undefined;
}

function stringsOf(e: T.Expression): Literal[] | undefined {
  if (!ts.isArrayLiteralExpression(e)) return undefined;
  const out: Literal[] = [];
  for (const el of e.elements) {
    const x = unwrap(el);
    if (!ts.isStringLiteralLike(x)) return undefined;
    out.push({ text: x.text, node: x });
  }
  return out;
}

/** Every string literal of the function around a node. */
function functionLiterals(n: T.Node): Literal[] {
  let f: T.Node | undefined = n.parent;
  while (f && !ts.isFunctionLike(f)) f = f.parent;
  const out: Literal[] = [];
  const walk = (x: T.Node): void => {
    if (ts.isStringLiteralLike(x)) out.push({ text: x.text, node: x });
    ts.forEachChild(x, walk);
  };
  if (f) walk(f);
  return out;
}

/**
 * `export const CONSUMERS = { consumer: { "event": ["successor", …], … }, … } as const`: every
 * name a string literal (or an identifier for a consumer), nothing computed.
 */
function readConsumers(sf: T.SourceFile, at: (n: T.Node) => string, file: string, problems: Problems): ConsumerDeclaration[] {
  const out: ConsumerDeclaration[] = [];
  let table: T.ObjectLiteralExpression | undefined;
  for (const s of sf.statements) {
    if (!ts.isVariableStatement(s) || !s.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
    for (const d of s.declarationList.declarations) {
      if (ts.isIdentifier(d.name) && d.name.text === "CONSUMERS" && d.initializer) {
        const init = unwrap(d.initializer);
        if (ts.isObjectLiteralExpression(init)) table = init;
        else problems.coded("TAU-C045", at(d), "CONSUMERS must be an object literal");
      }
    }
  }
  if (!table) {
    problems.coded("TAU-C045", file, "must export `const CONSUMERS = { consumer: { event: [successors] } } as const`");
    return out;
  }
  for (const c of table.properties) {
    const consumer = ts.isPropertyAssignment(c) ? propertyName(c.name) : undefined;
    const events = ts.isPropertyAssignment(c) ? unwrap(c.initializer) : undefined;
    if (consumer === undefined || !events || !ts.isObjectLiteralExpression(events)) {
      problems.coded("TAU-C045", at(c), "each consumer must be `name: { event: [successors] }`");
      continue;
    }
    for (const e of events.properties) {
      const event = ts.isPropertyAssignment(e) && ts.isStringLiteral(e.name) ? e.name.text : undefined;
      const list = ts.isPropertyAssignment(e) ? stringsOf(unwrap(e.initializer)) : undefined;
      if (event === undefined || list === undefined) {
        problems.coded("TAU-C045", at(e), `consumer ${consumer}: each entry must be "event.name": ["successor", …] with string literals only`);
        continue;
      }
      out.push({ consumer, event, successors: list.map((l) => l.text), where: at(e) });
    }
  }
  return out;
}
