// An MCP server's form as tau reads, shows and checks it (SPEC-mcp, "Elicitation"): the fields of
// each kind the protocol has, a form tau cannot show, what a typed answer becomes, and an answer
// checked against the form before it goes back to the server.
import { describe, expect, it } from "vitest";
import { checkAnswer, formFields } from "../../../handwritten/extensions/mcp/elicitation.js";
import { askOf, callNeedsAsking } from "../../../handwritten/extensions/mcp/names.js";
import { readValue } from "../../../handwritten/cli/tui/elicitation-dialog.js";
import type { McpElicitationField } from "../../../generated/index.js";

const form = {
  type: "object" as const,
  properties: {
    name: { type: "string" as const, title: "Your name", minLength: 1, maxLength: 20 },
    age: { type: "integer" as const, minimum: 0, maximum: 150 },
    colour: { type: "string" as const, enum: ["red", "green"], enumNames: ["Red", "Green"] },
    size: { type: "string" as const, oneOf: [{ const: "s", title: "Small" }, { const: "l", title: "Large" }] },
    tags: { type: "array" as const, items: { type: "string" as const, enum: ["a", "b", "c"] }, maxItems: 2 },
    news: { type: "boolean" as const, default: false },
  },
  required: ["name"],
};

describe("an elicitation form", () => {
  it("[mcp.elicitation.form-fields] each kind of field becomes one tau shows, with its bounds, options and default; a form of more than 32 fields is declined", () => {
    const fields = formFields(form);
    expect(fields).toEqual([
      { name: "name", required: true, title: "Your name", kind: "string", min_length: 1, max_length: 20 },
      { name: "age", required: false, kind: "integer", minimum: 0, maximum: 150 },
      { name: "colour", required: false, kind: "choice", options: [{ value: "red", label: "Red" }, { value: "green", label: "Green" }] },
      { name: "size", required: false, kind: "choice", options: [{ value: "s", label: "Small" }, { value: "l", label: "Large" }] },
      { name: "tags", required: false, kind: "choices", options: [{ value: "a" }, { value: "b" }, { value: "c" }], max_length: 2 },
      { name: "news", required: false, kind: "boolean", default: "false" },
    ]);
    const wide = { type: "object" as const, properties: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`f${i}`, { type: "boolean" as const }])) };
    expect(formFields(wide)).toBe("the form has 33 fields, more than 32");
  });

  it("[mcp.elicitation.answer-checked] an answer goes back only when it fits the form: required fields, kinds, bounds, options, no unknown field", () => {
    const fields = formFields(form) as McpElicitationField[];
    expect(checkAnswer(fields, { name: "Ada", age: 36, colour: "green", tags: ["a", "c"], news: true })).toEqual({ name: "Ada", age: 36, colour: "green", tags: ["a", "c"], news: true });
    expect(checkAnswer(fields, { age: 3 })).toBe("name is required");
    expect(checkAnswer(fields, { name: "Ada", age: 3.5 })).toBe("age: not an integer");
    expect(checkAnswer(fields, { name: "Ada", age: 200 })).toBe("age: out of 0–150");
    expect(checkAnswer(fields, { name: "Ada", colour: "blue" })).toBe("colour: not one of the options");
    expect(checkAnswer(fields, { name: "Ada", tags: ["a", "b", "c"] })).toBe("tags: too few or too many picked");
    expect(checkAnswer(fields, { name: "" })).toBe("name: too short or too long");
    expect(checkAnswer(fields, { name: "Ada", extra: 1 })).toBe("extra is not a field of the form");
    expect(checkAnswer(fields, { name: "Ada", news: "yes" })).toBe("news: not true or false");
  });

  it("[mcp.elicitation.typed-values] what is typed for a field becomes its value: y/n, numbers in bounds, an option by number or value, several by commas; an empty optional field is skipped", () => {
    const f = Object.fromEntries((formFields(form) as McpElicitationField[]).map((x) => [x.name, x]));
    expect(readValue(f.news!, "y")).toEqual({ value: true });
    expect(readValue(f.news!, "No")).toEqual({ value: false });
    expect(readValue(f.news!, "maybe")).toEqual({ problem: "answer y or n" });
    expect(readValue(f.age!, " 36 ")).toEqual({ value: 36 });
    expect(readValue(f.age!, "1.5")).toEqual({ problem: "type a whole number" });
    expect(readValue(f.colour!, "2")).toEqual({ value: "green" });
    expect(readValue(f.colour!, "red")).toEqual({ value: "red" });
    expect(readValue(f.colour!, "3")).toEqual({ problem: "type an option's number or value" });
    expect(readValue(f.tags!, "1, c")).toEqual({ value: ["a", "c"] });
    expect(readValue(f.age!, "")).toEqual({ skip: true });
    expect(readValue(f.name!, "  ")).toEqual({ problem: "name is required" });
  });
});

describe("asking before a call", () => {
  it("[mcp.ask.defaults] a server that runs sandboxed is not asked about; a remote one, an unsandboxed one (for any reason) and one not started yet ask before tools that do not say they only read; the entry's ask wins", () => {
    expect(askOf({}, "sandboxed")).toBe("never");
    expect(askOf({}, "remote")).toBe("writes");
    expect(askOf({}, "unsandboxed")).toBe("writes");
    expect(askOf({}, undefined)).toBe("writes");
    expect(askOf({ ask: "never" }, "remote")).toBe("never");
    expect(askOf({ ask: "always" }, "sandboxed")).toBe("always");
    expect(callNeedsAsking("writes", { readOnly: true })).toBe(false);
    expect(callNeedsAsking("writes", { readOnly: false })).toBe(true);
    expect(callNeedsAsking("always", { readOnly: true })).toBe(true);
    expect(callNeedsAsking("never", { readOnly: false })).toBe(false);
  });
});
