// Bundles the CLI (and later the daemon and extension entries) into dist/ with esbuild, so a
// spawned tau process loads one module. Dependencies in node_modules stay external.
import { build } from "esbuild";
import { renameSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = dirname(fileURLToPath(import.meta.url));

/** Builds into a private folder, then swaps it in, so a concurrent `tau` never sees half a dist/. */
export async function buildAll(): Promise<void> {
  const staging = join(root, `.dist-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: {
      "cli/main": "handwritten/cli/main.ts",
      "cli/commands": "handwritten/cli/commands.ts",
      "cli/run-main": "handwritten/cli/run-main.ts",
      "cli/tui-main": "handwritten/cli/tui/main.ts",
      "daemon/main": "handwritten/harness/daemon-main.ts",
      "ext/main": "handwritten/extensions/main.ts",
    },
    outdir: staging,
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
  const old = join(root, `.dist-old-${process.pid}`);
  try {
    renameSync(join(root, "dist"), old);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  renameSync(staging, join(root, "dist"));
  rmSync(old, { recursive: true, force: true });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildAll();
}
