// Runs every bench/*.bench.ts in name order (or only those named on the command line).
// Each module exports `run(): Promise<void>` and prints its figures beside a baseline
// measured in the same run, with the ratio.
import { readdirSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { join } from "node:path";

const dir = fileURLToPath(new URL(".", import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort();
for (const file of files) {
  const mod = (await import(pathToFileURL(join(dir, file)).href)) as { run: () => Promise<void> };
  console.log(`\n## ${file.replace(/\.bench\.ts$/, "")}`);
  await mod.run();
}
