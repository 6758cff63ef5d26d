// spec/ (TypeSpec) → JSON Schema documents, compiled in memory so a failed run writes nothing.
import { compile, NodeHost, type CompilerHost } from "@typespec/compiler";
import { join } from "node:path";
import { CodegenError } from "./errors.js";

export type JsonSchema = Record<string, unknown>;

export async function compileSpec(root: string): Promise<Map<string, JsonSchema>> {
  const outputs = new Map<string, string>();
  const host: CompilerHost = {
    ...NodeHost,
    writeFile: async (path: string, content: string) => {
      outputs.set(path, content);
    },
    mkdirp: async (path: string) => path,
  };
  const program = await compile(host, join(root, "spec", "main.tsp"), {
    emit: ["@typespec/json-schema"],
    outputDir: join(root, ".tmp", "typespec-out"),
    options: { "@typespec/json-schema": { "file-type": "json", "seal-object-schemas": true } },
  });
  const errors = program.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) {
    const lines = errors.map((d) => {
      const target = d.target as { file?: { path?: string } } | undefined;
      const file = target?.file?.path ? target.file.path.slice(root.length + 1) : "spec/";
      return `${file}: ${d.code}: ${d.message}`;
    });
    throw new CodegenError("spec/main.tsp", `TypeSpec compile failed:\n  ${lines.join("\n  ")}`);
  }
  const schemas = new Map<string, JsonSchema>();
  for (const content of outputs.values()) {
    const schema = JSON.parse(content) as JsonSchema;
    const id = schema.$id;
    if (typeof id !== "string") throw new CodegenError("spec/", "emitted schema without $id");
    schemas.set(id, schema);
  }
  return new Map([...schemas.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
