// The contracts codegen writes for extensions in other languages (generated/sdk/): the Python
// module imports with python3 and carries what the harness writes through its types and back, and
// what it builds passes the harness's own validation, for every message and event; the Go package
// is well-formed and its structs follow every message and event schema (a structural reading that
// needs no Go toolchain; test/integration/transport/go-contracts.test.ts compiles and runs it).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EVENTS, EVENT_NAMES, MESSAGES, MESSAGE_NAMES, type EventName } from "../../../generated/index.js";
import { FrameReader, REVISION, encodeFrame, eventProblem, parseMessage } from "../../../handwritten/protocol/index.js";
import { REPO_ROOT } from "../../support/paths.js";
import { SCHEMAS, arbitraryForId } from "../../support/schema-arbitrary.js";

const PYTHON_PATH = [join(REPO_ROOT, "generated/sdk/python"), join(REPO_ROOT, "examples/python-tool")].join(":");
const GO_DIR = join(REPO_ROOT, "generated/sdk/go/tauprotocol");

function python(script: string, input: Buffer = Buffer.alloc(0)) {
  const r = spawnSync("python3", ["-c", script], { input, env: { ...process.env, PYTHONPATH: PYTHON_PATH, PYTHONDONTWRITEBYTECODE: "1" }, maxBuffer: 16 * 1024 * 1024 });
  // python3 is on every machine that builds tau (node-gyp needs it; .ci/run installs it if missing).
  if (r.error) throw new Error(`these tests need python3 on PATH: ${r.error.message}`);
  return r;
}

function framesOf(bytes: Buffer): unknown[] {
  return new FrameReader().push(bytes).map((f) => {
    if (!f.ok) throw f.error;
    return f.value;
  });
}

// What the harness sends an extension, as the harness writes it (integers from 2^32 up, such as
// recorded_at, as CBOR integers with 8-byte arguments).
const FROM_HARNESS = [
  {
    message: "configure",
    payload: {
      revision: { major: 1, minor: 0 },
      instance: "words-py",
      kind: "tool",
      tool_prefix: "py_",
      state_dir: "/state/ext/words-py",
      session_id: "s-1",
      config: { case_sensitive: true, nested: { list: [1, 2.5, "three", null] } },
      secrets: { token: "t" },
    },
  },
  {
    message: "deliver",
    payload: {
      event: { name: "tool.started", data: { agent_id: "a-1", prompt_id: "p-1", call_id: "c-1", tool: "py_word_frequency", owner: "words-py", arguments_json: '{"text":"a b"}' } },
      seq: 7,
      recorded_at: 1_764_547_200_123_456,
      publisher: { class: "harness" },
    },
  },
  {
    message: "deliver",
    payload: {
      event: { name: "agent.metadata_set", data: { agent_id: "a-1", key: "display_name", value: null, by: { class: "extension", instance: "words-py", kind: "tool", generation: 3 } } },
      seq: 2 ** 40,
      recorded_at: 1_764_547_200_000_000,
      publisher: { class: "harness" },
      replay: true,
    },
  },
  { message: "direct", payload: { event: { name: "tool.call", data: { agent_id: "a-1", prompt_id: "p-1", call_id: "c-1", tool: "py_word_frequency", arguments_json: '{"text":"a b"}' } } } },
  { message: "direct", payload: { event: { name: "tool.cancel_request", data: { agent_id: "a-1", call_id: "c-1" } } } },
  { message: "error", payload: { code: "bad_cbor" } },
  { message: "disconnect", payload: { reason: "session ended" } },
];

const ROUND_TRIP = `
import tau_protocol as tp
from tau_stdio import Channel, PROTOCOL_REVISION
channel = Channel()
while True:
    raw = channel.receive()
    if raw is None:
        break
    typed = tp.message_from_dict(raw)
    assert type(typed).__name__ == {"configure": "ConfigureMessage", "deliver": "DeliverMessage", "direct": "DirectMessage", "error": "ErrorMessage", "disconnect": "DisconnectMessage"}[raw["message"]]
    channel.send(typed)
    if raw["message"] in ("deliver", "direct"):
        event = typed.payload.event
        channel.send({"event": event.name, "data": tp.event_data_from_dict(event.name, event.data).to_dict()})

# A payload of the wrong shape is refused.
for wrong in ({"message": "hello", "payload": {"role": "extension"}}, {"message": "configure", "payload": {}}):
    try:
        tp.message_from_dict(wrong)
        channel.send({"refused": False})
    except (AssertionError, ValueError, KeyError):
        channel.send({"refused": True})

# What an extension sends, built from the types; the module's revision is the frame helper's.
assert (tp.PROTOCOL_REVISION.major, tp.PROTOCOL_REVISION.minor) == PROTOCOL_REVISION
emit = lambda name, data: tp.EmitMessage(message=tp.EmitMessageName.EMIT, payload=tp.EmitMessagePayload(event=tp.event_envelope(name, data)))
channel.send(tp.HelloMessage(message=tp.HelloMessageName.HELLO, payload=tp.HelloMessagePayload(revision=tp.PROTOCOL_REVISION, role=tp.PeerRole.EXTENSION)))
channel.send(emit("tool.registration_declared", tp.ToolRegistrationDeclared(name="word_frequency", description="d", parameters={"type": "object"})))
channel.send(tp.SubscribeMessage(message=tp.SubscribeMessageName.SUBSCRIBE, payload=tp.SubscribeMessagePayload(historical=[], live=["tool.started"])))
channel.send(tp.ReadyMessage(message=tp.ReadyMessageName.READY, payload=tp.ReadyMessagePayload()))
channel.send(emit("tool.progress_reported", tp.ToolProgressReported(call_id="c-1", text="half way")))
channel.send(emit("tool.result_reported", tp.ToolResultReported(call_id="c-1", output="a 1", display=tp.ToolDisplay(summary="2 words"))))
channel.send(emit("agent.metadata_request", tp.AgentMetadataRequest(agent_id="a-1", key="display_name", value=None)))
channel.send(tp.ExtensionNoticeRequestMessage(message=tp.ExtensionNoticeRequestMessageName.EXTENSION_NOTICE_REQUEST, payload=tp.ExtensionNoticeRequestMessagePayload(level=tp.NoticeLevel.INFO, text="hi")))
channel.send(tp.ConfigErrorMessage(message=tp.ConfigErrorMessageName.CONFIG_ERROR, payload=tp.ConfigErrorMessagePayload(text="bad")))
`;

describe("the Python contracts", () => {
  it("[sdk.python.contracts-round-trip] import with python3, carry what the harness writes through their types unchanged, and build messages the harness accepts", () => {
    for (const m of FROM_HARNESS) expect(parseMessage(m, "peer")).toMatchObject({ ok: true });
    const r = python(ROUND_TRIP, Buffer.concat(FROM_HARNESS.map((m) => encodeFrame(m))));
    expect(r.stderr.toString()).toBe("");
    expect(r.status).toBe(0);
    const out = framesOf(r.stdout);

    // Each harness message, then each carried event's payload, back as it was.
    const expected: unknown[] = [];
    for (const m of FROM_HARNESS) {
      expected.push(m);
      if (m.message === "deliver" || m.message === "direct") {
        const event = (m.payload as { event: { name: string; data: unknown } }).event;
        expected.push({ event: event.name, data: event.data });
      }
    }
    expect(out.slice(0, expected.length)).toEqual(expected);
    expect(out.slice(expected.length, expected.length + 2)).toEqual([{ refused: true }, { refused: true }]);

    // Built from the types: each one is a message the harness reads and validates.
    const built = out.slice(expected.length + 2);
    expect(built.map((m) => (m as { message: string }).message)).toEqual(["hello", "emit", "subscribe", "ready", "emit", "emit", "emit", "extension_notice_request", "config_error"]);
    for (const m of built) expect(parseMessage(m, "harness")).toMatchObject({ ok: true });
    expect(built[0]).toEqual({ message: "hello", payload: { revision: { ...REVISION }, role: "extension" } });
    expect(built[5]).toEqual({ message: "emit", payload: { event: { name: "tool.result_reported", data: { call_id: "c-1", output: "a 1", display: { summary: "2 words" } } } } });
    // A required nullable field is sent as null, an absent optional one not at all.
    expect(built[6]).toEqual({ message: "emit", payload: { event: { name: "agent.metadata_request", data: { agent_id: "a-1", key: "display_name", value: null } } } });
  });

  it("[sdk.python.contracts-round-trip] carry every wire message and event payload, sampled from its schema, through their types unchanged", () => {
    // Values the harness's validators accept, every optional field and union branch in turn: a field
    // a Python type lacks, or reads or writes in another shape, changes what comes back.
    const SAMPLES = 12;
    const frames: unknown[] = [];
    MESSAGE_NAMES.forEach((name, i) => {
      for (const m of fc.sample(arbitraryForId(`${MESSAGES[name].model}.json`), { numRuns: SAMPLES, seed: 1000 + i })) {
        expect(parseMessage(m, MESSAGES[name].direction === "from_harness" ? "peer" : "harness"), name).toMatchObject({ ok: true });
        frames.push(m);
      }
    });
    EVENT_NAMES.forEach((name: EventName, i) => {
      for (const data of fc.sample(arbitraryForId(`${EVENTS[name].model}.json`), { numRuns: SAMPLES, seed: 2000 + i })) {
        expect(eventProblem({ name, data } as never), name).toBeUndefined();
        frames.push({ event: name, data });
      }
    });
    const r = python(
      `
import tau_protocol as tp
from tau_stdio import Channel
channel = Channel()
while True:
    raw = channel.receive()
    if raw is None:
        break
    try:
        if "message" in raw:
            channel.send(tp.message_from_dict(raw).to_dict())
        else:
            channel.send({"event": raw["event"], "data": tp.event_data_from_dict(raw["event"], raw["data"]).to_dict()})
    except Exception as err:
        channel.send({"refused": repr(err)})
`,
      Buffer.concat(frames.map((f) => encodeFrame(f))),
    );
    expect(r.stderr.toString()).toBe("");
    expect(r.status).toBe(0);
    const back = framesOf(r.stdout);
    expect(back).toHaveLength(frames.length);
    // One assertion per frame, so a failure names the message or event whose type is wrong.
    frames.forEach((f, i) => expect(back[i], JSON.stringify(f).slice(0, 200)).toEqual(f));
    expect(frames.length).toBe(SAMPLES * (MESSAGE_NAMES.length + EVENT_NAMES.length));
  });

  it("list every wire message and event of the spec", () => {
    const r = python("import json, tau_protocol as tp; print(json.dumps([sorted(tp.MESSAGE_TYPES), sorted(tp.EVENT_PAYLOAD_TYPES)]))");
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout.toString())).toEqual([[...MESSAGE_NAMES].sort(), [...EVENT_NAMES].sort()]);
  });

  it("the example's frame helper refuses what the protocol does not allow", () => {
    const r = python(`
import struct
from tau_stdio import ProtocolError, decode, encode
cases = {
    "tag": b"\\xc1\\x00",
    "indefinite map": b"\\xbf\\xff",
    "undefined": b"\\xf7",
    "duplicate key": b"\\xa2\\x61a\\x01\\x61a\\x02",
    "bad utf-8": b"\\x62\\xc3\\x28",
    "trailing bytes": b"\\x01\\x02",
    "too deep": b"\\x81" * 65 + b"\\x01",
}
refused = []
for what, body in cases.items():
    try:
        decode(body)
    except ProtocolError:
        refused.append(what)
for value in (2 ** 53, {1: "x"}, object()):
    try:
        encode(value)
    except ProtocolError:
        refused.append(repr(type(value).__name__))
print(",".join(refused))
print(decode(encode({"n": 2 ** 40, "f": 1.5, "i": 2.0 ** 33, "s": "été", "b": b"\\x00", "l": [True, False, None]})))
`);
    expect(r.stderr.toString()).toBe("");
    expect(r.stdout.toString().split("\n")).toEqual([
      "tag,indefinite map,undefined,duplicate key,bad utf-8,trailing bytes,too deep,'int','dict','object'",
      "{'n': 1099511627776, 'f': 1.5, 'i': 8589934592, 's': 'été', 'b': b'\\x00', 'l': [True, False, None]}",
      "",
    ]);
  });
});

interface GoField {
  readonly name: string;
  readonly type: string;
  /** The wire name, from the json tag (the cbor tag must say the same). */
  readonly key: string;
  readonly omitempty: boolean;
}

/** What a Go package of quicktype's "just types" shape declares, read line by line. */
interface GoPackage {
  readonly packages: string[];
  readonly structs: Map<string, GoField[]>;
  /** Each `type X string` with the values of its constants. */
  readonly strings: Map<string, string[]>;
  /** Every package-level name: types, constants, functions. */
  readonly names: string[];
  /** `case "name": return &Type{}` of each registry function, by function. */
  readonly registry: Map<string, Map<string, string>>;
  /** Each package-level `var Name = Type{Field: N, …}` of integers, by name. */
  readonly vars: Map<string, { type: string; fields: Record<string, number> }>;
}

/**
 * A reader for the few forms the generated files use; any other line fails it. Not a Go parser,
 * but without `go` on the machine it checks what a compiler would first refuse here: a line that
 * is not one of these forms, a name declared twice, a type used but never declared.
 */
function readGo(files: readonly string[]): GoPackage {
  const pkg: GoPackage = { packages: [], structs: new Map(), strings: new Map(), names: [], registry: new Map(), vars: new Map() };
  for (const file of files) {
    let state: "top" | "struct" | "const" | "func" = "top";
    let fields: GoField[] = [];
    let cases = new Map<string, string>();
    let pendingCase: string | undefined;
    for (const line of file.split("\n")) {
      const bad = () => {
        throw new Error(`unexpected Go line (${state}): ${JSON.stringify(line)}`);
      };
      let m: RegExpExecArray | null;
      if (state === "top") {
        if (line === "" || line.startsWith("// ")) continue;
        if ((m = /^package (\w+)$/.exec(line))) pkg.packages.push(m[1]!);
        else if ((m = /^type (\w+) struct \{$/.exec(line))) {
          pkg.names.push(m[1]!);
          pkg.structs.set(m[1]!, (fields = []));
          state = "struct";
        } else if ((m = /^type (\w+) string$/.exec(line))) {
          pkg.names.push(m[1]!);
          pkg.strings.set(m[1]!, []);
        } else if (line === "const (") state = "const";
        else if ((m = /^var (\w+) = (\w+)\{((?:\w+: \d+(?:, )?)*)\}$/.exec(line))) {
          pkg.names.push(m[1]!);
          const fields = Object.fromEntries(m[3]!.split(", ").map((f) => f.split(": ")).map(([k, v]) => [k!, Number(v)]));
          pkg.vars.set(m[1]!, { type: m[2]!, fields });
        } else if ((m = /^func (\w+)\(\w+ string\) any \{$/.exec(line))) {
          pkg.names.push(m[1]!);
          pkg.registry.set(m[1]!, (cases = new Map()));
          state = "func";
        } else bad();
      } else if (state === "struct") {
        if (line === "}") state = "top";
        else if (line.startsWith("\t// ")) continue;
        else if ((m = /^\t([A-Z]\w*) +(\S+) +`json:"(\w+)(,omitempty)?" cbor:"(\w+)(,omitempty)?"`$/.exec(line))) {
          if (m[3] !== m[5] || m[4] !== m[6]) bad();
          fields.push({ name: m[1]!, type: m[2]!, key: m[3]!, omitempty: m[4] !== undefined });
        } else bad();
      } else if (state === "const") {
        if (line === ")") state = "top";
        else if ((m = /^\t(\w+) +(\w+) = "([^"\\]*)"$/.exec(line))) {
          pkg.names.push(m[1]!);
          const values = pkg.strings.get(m[2]!);
          if (!values) throw new Error(`constant ${m[1]} of undeclared type ${m[2]}`);
          values.push(m[3]!);
        } else bad();
      } else {
        if (line === "}") state = "top";
        else if (line === "\tswitch name {" || line === "\t}" || line === "\treturn nil") continue;
        else if ((m = /^\tcase ("[^"\\]+"):$/.exec(line))) pendingCase = JSON.parse(m[1]!) as string;
        else if ((m = /^\t\treturn &(\w+)\{\}$/.exec(line)) && pendingCase !== undefined) {
          cases.set(pendingCase, m[1]!);
          pendingCase = undefined;
        } else bad();
      }
    }
    if (state !== "top") throw new Error(`a Go file ends inside a ${state}`);
  }
  return pkg;
}

type Schema = Record<string, unknown>;

/** Follows `$ref`s (to another schema file, or to `#/$defs/…` of the current one). */
function resolve(schema: Schema, root: Schema): { schema: Schema; root: Schema } {
  while (typeof schema.$ref === "string") {
    const ref = schema.$ref;
    if (ref.startsWith("#/$defs/")) schema = (root.$defs as Record<string, Schema>)[ref.slice(8)]!;
    else schema = root = SCHEMAS.get(ref)!;
    if (!schema) throw new Error(`dangling $ref ${ref}`);
  }
  return { schema, root };
}

/**
 * Checks that the Go type `goType` of a field at `where` stands for `schema`: Go's own type for a
 * scalar, a declared string type with exactly the schema's values for an enum or constant, a
 * struct whose fields are the schema's properties for an object, a pointer where the value may be
 * absent or null (but not for a slice or map, whose nil is already absent).
 */
function expectGoType(pkg: GoPackage, goType: string, at: Schema, atRoot: Schema, optional: boolean, where: string, seen: Set<string>): void {
  let { schema, root } = resolve(at, atRoot);
  let nullable = false;
  if (Array.isArray(schema.anyOf)) {
    const branches = schema.anyOf as Schema[];
    const others = branches.filter((b) => b.type !== "null");
    nullable = others.length < branches.length;
    // quicktype merges a union of several shapes; these contracts have only "X or null".
    expect(others, `${where}: a union other than X-or-null`).toHaveLength(1);
    ({ schema, root } = resolve(others[0]!, root));
  }
  let base: string;
  let check: (t: string) => void = () => {};
  if ("const" in schema || Array.isArray(schema.enum)) {
    const values = "const" in schema ? [schema.const] : (schema.enum as unknown[]);
    base = goType.replace(/^\*/, "");
    expect(pkg.strings.get(base)?.slice().sort(), `${where}: ${base} holds the schema's values`).toEqual([...values].map(String).sort());
  } else if (schema.type === "string") base = "string";
  else if (schema.type === "integer") base = "int64";
  else if (schema.type === "number") base = "float64";
  else if (schema.type === "boolean") base = "bool";
  else if (schema.type === "array") {
    base = goType.startsWith("[]") ? goType : "[] (a slice)";
    check = (t) => expectGoType(pkg, t.slice(2), schema.items as Schema, root, false, `${where}[]`, seen);
  } else if (schema.type === "object" && (Object.keys((schema.properties ?? {}) as object).length > 0 || isSealed(schema))) {
    base = goType.replace(/^\*/, "");
    check = (t) => expectGoStruct(pkg, t, schema, root, where, seen);
  } else if (schema.type === "object") {
    const extra = (schema.unevaluatedProperties ?? schema.additionalProperties ?? {}) as Schema;
    if (Object.keys(extra).length === 0) base = "map[string]interface{}";
    else {
      base = goType.startsWith("map[string]") ? goType : "map[string] (a map)";
      check = (t) => expectGoType(pkg, t.slice("map[string]".length), extra, root, false, `${where}{}`, seen);
    }
  } else throw new Error(`${where}: a schema this check does not know: ${JSON.stringify(schema).slice(0, 120)}`);
  const byReference = base.startsWith("[]") || base.startsWith("map[");
  const expected = (optional || nullable) && !byReference ? `*${base}` : base;
  expect(goType, where).toBe(expected);
  check(base);
}

/** An object that allows no properties beyond its own (a sealed TypeSpec model). */
function isSealed(schema: Schema): boolean {
  const extra = schema.unevaluatedProperties ?? schema.additionalProperties;
  return extra === false || (typeof extra === "object" && extra !== null && "not" in extra);
}

function expectGoStruct(pkg: GoPackage, name: string, schema: Schema, root: Schema, where: string, seen: Set<string>): void {
  const fields = pkg.structs.get(name);
  expect(fields, `${where}: struct ${name} is declared`).toBeDefined();
  // A struct reached again (a shared type) was checked against the same schema the first time.
  if (seen.has(`${name} ${JSON.stringify(schema)}`)) return;
  seen.add(`${name} ${JSON.stringify(schema)}`);
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  expect(fields!.map((f) => f.key).sort(), `${where}: the fields of ${name}`).toEqual(Object.keys(props).sort());
  for (const f of fields!) {
    expect(f.omitempty, `${where}.${f.key}: omitempty exactly when optional`).toBe(!required.has(f.key));
    expectGoType(pkg, f.type, props[f.key]!, root, !required.has(f.key), `${where}.${f.key}`, seen);
  }
}

/** Fails (an expect or an Error) unless the Go files are well-formed and follow the schemas. */
function checkGoContracts(types: string, registry: string): void {
  for (const file of [types, registry]) expect(file.split("\n")[0]).toMatch(/^\/\/ Code generated .* DO NOT EDIT\.$/);
  const pkg = readGo([types, registry]);
  expect(pkg.packages).toEqual(["tauprotocol", "tauprotocol"]);
  const twice = pkg.names.filter((n, i) => pkg.names.indexOf(n) !== i);
  expect(twice, "package-level names declared twice").toEqual([]);
  // Every type a field uses is Go's own or declared here.
  const declared = new Set([...pkg.structs.keys(), ...pkg.strings.keys(), "string", "int64", "float64", "bool", "interface{}"]);
  for (const [struct, fields] of pkg.structs) {
    for (const f of fields) expect(declared.has(f.type.replace(/^(\*|\[\]|map\[string\])+/, "")), `${struct}.${f.name} ${f.type}`).toBe(true);
    const goNames = fields.map((f) => f.name);
    expect(new Set(goNames).size, `${struct}: a field name twice`).toBe(goNames.length);
  }

  // The revision hello carries is this build's, in a declared struct.
  expect(pkg.vars.get("ProtocolRevision")).toEqual({ type: "Revision", fields: { Major: REVISION.major, Minor: REVISION.minor } });
  expect(pkg.structs.has("Revision")).toBe(true);

  // The registry maps every message and event name to the struct that follows its schema.
  expect([...pkg.registry.keys()].sort()).toEqual(["NewEventPayload", "NewMessage"]);
  const messages = pkg.registry.get("NewMessage")!;
  const events = pkg.registry.get("NewEventPayload")!;
  expect([...messages.keys()].sort()).toEqual([...MESSAGE_NAMES].sort());
  expect([...events.keys()].sort()).toEqual([...EVENT_NAMES].sort());
  const seen = new Set<string>();
  let checked = 0;
  for (const [names, info, table] of [[MESSAGE_NAMES, MESSAGES, messages], [EVENT_NAMES, EVENTS, events]] as const) {
    for (const name of names) {
      const schema = SCHEMAS.get(`${(info as Record<string, { model: string }>)[name]!.model}.json`)!;
      expectGoStruct(pkg, table.get(name)!, schema, schema, name, seen);
      checked++;
    }
  }
  expect(checked).toBe(MESSAGE_NAMES.length + EVENT_NAMES.length);
  // Every struct is some message's or event's, or part of one.
  expect([...pkg.structs.keys()].filter((s) => ![...seen].some((k) => k.startsWith(`${s} `)))).toEqual([]);
}

describe("the Go contracts", () => {
  const types = readFileSync(join(GO_DIR, "types.go"), "utf8");
  const registry = readFileSync(join(GO_DIR, "registry.go"), "utf8");

  it("[sdk.go.contracts-well-formed] are one well-formed package whose structs, fields, tags and registry follow every message and event schema", () => {
    checkGoContracts(types, registry);
  });

  it("the structural check refuses Go that does not follow the schemas", () => {
    const mutants: Array<[string, string, string]> = [
      ["a wire name changed", '`json:"agent_id" cbor:"agent_id"`', '`json:"agentId" cbor:"agentId"`'],
      ["tags that disagree", '`json:"call_id" cbor:"call_id"`', '`json:"call_id" cbor:"callid"`'],
      ["an optional field made required", '`json:"prompt_id,omitempty" cbor:"prompt_id,omitempty"`', '`json:"prompt_id" cbor:"prompt_id"`'],
      ["a nullable field not a pointer", "\tValue   *string `json:\"value\"", "\tValue   string  `json:\"value\""],
      ["a type changed", "\tRounds   int64       `", "\tRounds   float64     `"],
      ["a field dropped", "\tMinor int64 `json:\"minor\" cbor:\"minor\"`\n", ""],
      ["an enum value changed", '= "steer"', '= "steering"'],
      ["an unbalanced brace", "type Revision struct {", "type Revision struct {{"],
      ["a struct left open", "\tMinor int64 `json:\"minor\" cbor:\"minor\"`\n}", "\tMinor int64 `json:\"minor\" cbor:\"minor\"`"],
      ["a name declared twice", "type PromptMode string", "type PromptMode string\n\ntype PromptMode string"],
    ];
    for (const [what, from, to] of mutants) {
      expect(types, what).toContain(from);
      expect(() => checkGoContracts(types.replace(from, to), registry), what).toThrow();
    }
    expect(() => checkGoContracts(types, registry.replace('case "hello":', 'case "helo":'))).toThrow();
  });

  const gofmt = spawnSync("gofmt", ["-h"]).error === undefined;
  it.skipIf(!gofmt)(`parse and are formatted as gofmt formats them${gofmt ? "" : " (skipped: gofmt is not installed)"}`, () => {
    const r = spawnSync("gofmt", ["-l", "-e", GO_DIR], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("");
    expect(r.status).toBe(0);
  });
});
