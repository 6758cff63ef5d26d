// An example tau extension: one tool, `word_count`, written with the extension SDK.
// Configure it in harness.yaml:
//   extensions:
//     - name: words
//       command: ["node", "--import", "tsx", "examples/word-count/main.ts"]
//       config: { unit: "words" }
import { Extension, ToolFailure } from "../../handwritten/sdk/index.js";

const ext = await Extension.connect();
const unit = (ext.config as { unit?: string }).unit ?? "words";
if (unit !== "words" && unit !== "lines") {
  ext.configError(`unit must be "words" or "lines", not ${JSON.stringify(unit)}`);
} else {
  ext.registerTool({
    name: "word_count",
    description: `Counts the ${unit} in a text.`,
    parameters: {
      type: "object",
      properties: { text: { type: "string", maxLength: 1_000_000 } },
      required: ["text"],
      additionalProperties: false,
    },
    run: async (args) => {
      const text = (args as { text?: unknown }).text;
      if (typeof text !== "string") throw new ToolFailure("text must be a string");
      const count = unit === "lines" ? text.split("\n").filter((l) => l !== "").length : text.split(/\s+/).filter(Boolean).length;
      return { output: `${count} ${unit}`, display: { summary: `${count} ${unit}` } };
    },
  });
  ext.ready();
}
