// Bundles tau into dist/ with esbuild, so a spawned tau process loads as little as possible.
//
// - dist/fast/*.cjs: the entries bin/tau.cjs answers before the command framework (`tau run`,
//   `tau daemon`, `tau ext <name>`). Each is one self-contained CommonJS file with its dependencies
//   inlined (no module resolution at start-up, nothing it does not use), loaded through
//   bin/bundle-loader.cjs with a V8 code cache.
// - dist/cli/*.js (+ shared chunks in dist/chunks/): the oclif command framework path, ESM with
//   node_modules external; dist/ext/main.js answers `tau ext` for a name without a bundle of its own.
import { build, type Plugin } from "esbuild";
import { readFileSync, readdirSync, existsSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = dirname(fileURLToPath(import.meta.url));

/** First-party extensions: every handwritten/extensions/<name>/main.ts becomes dist/fast/ext-<name>.cjs. */
function extensionEntries(): Record<string, string> {
  const dir = join(root, "handwritten", "extensions");
  const entries: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    if (existsSync(join(dir, name, "main.ts"))) entries[`fast/ext-${name}`] = `handwritten/extensions/${name}/main.ts`;
  }
  return entries;
}

/**
 * Two sources load CommonJS code through `createRequire(import.meta.url)` (the generated ajv
 * validators' runtime helpers and cbor-x's no-eval build). In a CommonJS bundle that becomes a plain
 * `require`, so esbuild inlines the dependency instead of resolving it from node_modules at run time.
 */
const inlineCreateRequire: Plugin = {
  name: "inline-create-require",
  setup(b) {
    b.onLoad({ filter: /(generated[\\/]validators\.js|protocol[\\/]cbor\.ts)$/ }, (args) => {
      const text = readFileSync(args.path, "utf8")
        .replace(/^const require = createRequire\(import\.meta\.url\);$/m, "")
        .replace(/createRequire\(import\.meta\.url\)\(/g, "require(");
      return { contents: text, loader: args.path.endsWith(".ts") ? "ts" : "js" };
    });
  },
};

/**
 * esbuild escapes every non-ASCII character in code (its default `charset: "ascii"`) but keeps the
 * ones in the comments it preserves. Escaping those too makes each bundle pure ASCII, which the
 * loader decodes several times faster (latin1, one-byte string) than UTF-8. Line numbers are kept.
 */
function asciiComments(file: string): void {
  const text = readFileSync(file, "utf8");
  const ascii = text.replace(/[^\x00-\x7f]/gu, (ch) => `\\u{${(ch.codePointAt(0) as number).toString(16)}}`);
  if (ascii !== text) writeFileSync(file, ascii);
}

/** Builds into a private folder, then swaps it in, so a concurrent `tau` never sees half a dist/. */
export async function buildAll(): Promise<void> {
  const staging = join(root, `.dist-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  const common = {
    absWorkingDir: root,
    outdir: staging,
    bundle: true,
    platform: "node",
    target: "node20",
    sourcemap: "linked",
    logLevel: "warning",
    legalComments: "none",
  } as const;
  await Promise.all([
    build({
      ...common,
      entryPoints: {
        "cli/main": "handwritten/cli/main.ts",
        "cli/commands": "handwritten/cli/commands.ts",
        // The interactive UI stays ESM with shared chunks: its first frame needs only a small one,
        // and the connection half (config, transport, store) is imported after it.
        "cli/tui-main": "handwritten/cli/tui/main.ts",
        "ext/main": "handwritten/extensions/main.ts",
      },
      splitting: true,
      // Every output one folder below dist/, like the entries and the fast bundles.
      chunkNames: "chunks/[name]-[hash]",
      format: "esm",
      packages: "external",
    }),
    build({
      ...common,
      entryPoints: {
        "fast/run": "handwritten/cli/run-main.ts",
        // Loaded by fast/run after it has started the daemon (see run-main.ts).
        "fast/run-prompt": "handwritten/cli/run-prompt.ts",
        "fast/daemon": "handwritten/harness/daemon-main.ts",
        ...extensionEntries(),
      },
      outExtension: { ".js": ".cjs" },
      format: "cjs",
      // Less to read, hash and deserialize at every start; identifiers stay, so stacks stay legible.
      minifyWhitespace: true,
      minifySyntax: true,
      // `import.meta.url` of the source file becomes the bundle's own URL (same folder depth as before).
      define: { "import.meta.url": "__tau_bundle_url" },
      banner: { js: 'var __tau_bundle_url = require("node:url").pathToFileURL(__filename).href;' },
      plugins: [inlineCreateRequire],
    }),
  ]);
  for (const file of readdirSync(join(staging, "fast"))) if (file.endsWith(".cjs")) asciiComments(join(staging, "fast", file));
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
