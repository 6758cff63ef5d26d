// codegen's contracts for extensions in other languages (codegen/polyglot.ts → generated/sdk/).
import { afterEach, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generate } from "../../../codegen/main.js";
import { SDK_GO_TYPES, SDK_PYTHON_MODULE, SdkEmitter, alignGoStructs, contractView } from "../../../codegen/polyglot.js";
import type { Tables } from "../../../codegen/tables.js";
import type { JsonSchema } from "../../../codegen/typespec.js";
import { CodegenError } from "../../../codegen/errors.js";
import { scratchRoot } from "../../support/scratch-root.js";

const disposers: Array<() => void> = [];
afterEach(() => {
  while (disposers.length > 0) disposers.pop()?.();
});

/** The body of the Python class or Go struct `name` in a generated file. */
function declaration(code: string, start: string): string {
  const from = code.indexOf(start);
  expect(from, start).toBeGreaterThanOrEqual(0);
  const end = code.indexOf(start.startsWith("class") ? "\n\n\n" : "\n}\n", from);
  return code.slice(from, end);
}

describe("the other-language contracts", () => {
  it("[codegen.sdk.follows-spec] are written from spec/ by every codegen run: a field added to an event reaches the Python and Go types", async () => {
    const s = scratchRoot();
    disposers.push(s.dispose);
    const before = await generate(s.root);
    const tool = join(s.root, "spec", "events", "tool.tsp");
    writeFileSync(tool, readFileSync(tool, "utf8").replace("model ToolProgressReported {\n  call_id: Id;", "model ToolProgressReported {\n  call_id: Id;\n  /** Done so far, in percent. */\n  percent?: uint8;"));
    const after = await generate(s.root);

    const pyBefore = declaration(before.get(SDK_PYTHON_MODULE)!, "class ToolProgressReported:");
    const pyAfter = declaration(after.get(SDK_PYTHON_MODULE)!, "class ToolProgressReported:");
    expect(pyBefore).not.toContain("percent");
    expect(pyAfter).toContain('    percent: Optional[int] = None\n    """Done so far, in percent."""');
    expect(pyAfter).toContain('percent = from_union([from_int, from_none], obj.get("percent"))');
    const goBefore = declaration(before.get(SDK_GO_TYPES)!, "type ToolProgressReported struct {");
    const goAfter = declaration(after.get(SDK_GO_TYPES)!, "type ToolProgressReported struct {");
    expect(goBefore).not.toContain("Percent");
    expect(goAfter).toContain('\t// Done so far, in percent.\n\tPercent *int64 `json:"percent,omitempty" cbor:"percent,omitempty"`');
  });
});

describe("the view quicktype is given", () => {
  const schemas = new Map<string, JsonSchema>([
    [
      "PingMessage.json",
      {
        $id: "PingMessage.json",
        type: "object",
        "x-tau-message": "ping",
        properties: {
          message: { type: "string", const: "ping" },
          payload: {
            type: "object",
            properties: {
              id: { $ref: "Id.json", description: "kept: a string type has no doc of its own" },
              envelope: { $ref: "Envelope.json", description: "dropped: it would become Envelope's doc" },
              extra: { type: "object", properties: {}, unevaluatedProperties: {} },
            },
            required: ["id"],
            unevaluatedProperties: { not: {} },
          },
        },
        required: ["message", "payload"],
        unevaluatedProperties: { not: {} },
      },
    ],
    ["Id.json", { $id: "Id.json", type: "string", pattern: "^[a-z]+$", maxLength: 128 }],
    ["Envelope.json", { $id: "Envelope.json", type: "object", properties: { name: { type: "string", format: "x" } }, required: ["name"], unevaluatedProperties: { not: {} } }],
  ]);
  const tables = { messages: [{ name: "ping", direction: "both", model: "PingMessage", description: "" }], events: [], records: [], revision: { major: 1, minor: 0 } } as Tables;

  it("names types after their models and properties, seals objects, and keeps only what shapes a type", () => {
    const view = contractView(schemas, tables);
    expect(view.roots).toEqual(["PingMessage"]);
    expect(view.schemas.get("PingMessage.json")).toEqual({
      title: "PingMessage",
      type: "object",
      properties: {
        message: { type: "string", const: "ping", title: "PingMessageName" },
        payload: {
          title: "PingMessagePayload",
          type: "object",
          properties: {
            id: { $ref: "Id.json", description: "kept: a string type has no doc of its own" },
            envelope: { $ref: "Envelope.json" },
            extra: { type: "object", properties: {}, additionalProperties: {} },
          },
          required: ["id"],
          additionalProperties: false,
        },
      },
      required: ["message", "payload"],
      additionalProperties: false,
    });
    expect(view.schemas.get("Id.json")).toEqual({ title: "Id", type: "string" });
    expect(view.schemas.get("Envelope.json")).toEqual({ title: "Envelope", type: "object", properties: { name: { type: "string" } }, required: ["name"], additionalProperties: false });
  });

  it("fails codegen when quicktype fails, saying so", async () => {
    const dangling = new Map([...schemas].filter(([id]) => id !== "Envelope.json"));
    const sdk = SdkEmitter.start();
    try {
      await expect(sdk.emit(dangling, tables)).rejects.toThrow(/^generated\/sdk\/: quicktype failed: .*Envelope\.json/);
    } finally {
      sdk.close();
    }
  });

  it("refuses a keyword it does not know, naming the schema", () => {
    const odd = new Map([...schemas, ["Id.json", { $id: "Id.json", type: "string", oneOf: [] }]]);
    expect(() => contractView(odd, tables)).toThrow(CodegenError);
    expect(() => contractView(odd, tables)).toThrow('generated/schemas/Id.json: unsupported JSON Schema keyword "oneOf"');
  });
});

describe("Go struct alignment", () => {
  it("aligns names, types and tags a run of fields at a time, as gofmt does; comment lines end a run", () => {
    const input = [
      "type A struct {",
      "\tClass                 PeerClass `json:\"class\"`",
      "\t// A comment quicktype counted into its columns.",
      "\tGeneration                    *int64 `json:\"generation\"`",
      "\tKind *ExtensionKind `json:\"kind\"`",
      "}",
      "",
      '\tNotAField string `json:"x"`',
    ];
    expect(alignGoStructs(input)).toEqual([
      "type A struct {",
      '\tClass PeerClass `json:"class"`',
      "\t// A comment quicktype counted into its columns.",
      '\tGeneration *int64         `json:"generation"`',
      '\tKind       *ExtensionKind `json:"kind"`',
      "}",
      "",
      '\tNotAField string `json:"x"`',
    ]);
  });
});
