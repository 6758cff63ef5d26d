// Bundles the CLI (and later the daemon and extension entries) into dist/ with esbuild, so a
// spawned tau process loads one module. Dependencies in node_modules stay external.
import { build } from "esbuild";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = dirname(fileURLToPath(import.meta.url));

export async function buildAll(): Promise<void> {
  rmSync(join(root, "dist"), { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: { "cli/main": "handwritten/cli/main.ts", "cli/commands": "handwritten/cli/commands.ts" },
    outdir: "dist",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    sourcemap: "linked",
    logLevel: "warning",
    legalComments: "none",
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildAll();
}
