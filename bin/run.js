#!/usr/bin/env node
// tau's entry point. Hot paths are answered here, before the command framework is loaded, so that
// `tau --version` and spawned processes (daemon, extensions) start fast.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const argv = process.argv.slice(2);

if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  process.stdout.write(`tau/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else if (argv[0] === "run" && !argv.includes("--help") && !argv.includes("-h")) {
  await runFast("run", argv.slice(1));
} else if (argv.length === 0 || argv[0] === "--harness-config" || ((argv[0] === "attach" || argv[0] === "resume") && !argv.includes("--help") && !argv.includes("-h"))) {
  // The interactive UI: `tau`, `tau attach [SESSION]`, `tau resume [SESSION]`.
  const tui = await loadBuilt("cli/tui-main.js");
  await tui.main(argv);
} else if (argv[0] === "ext" && /^[a-z0-9-]+$/.test(argv[1] ?? "") && (await runFast(`ext-${argv[1]}`, [], true))) {
  // a first-party extension with a bundle of its own
} else if (argv[0] === "ext") {
  const ext = await loadBuilt("ext/main.js");
  await ext.main(argv.slice(1));
} else if (argv[0] === "daemon") {
  await runFast("daemon", argv.slice(1));
} else {
  const cli = await loadBuilt("cli/main.js");
  await cli.main(import.meta.url);
}

/**
 * Runs `dist/fast/<name>.cjs` (one self-contained bundle, with a V8 code cache) and awaits its main().
 * Returns false when `optional` and there is no such bundle.
 */
async function runFast(name, args, optional = false) {
  const { loadBundle } = createRequire(import.meta.url)("./bundle-loader.cjs");
  let bundle;
  try {
    bundle = loadBundle(fileURLToPath(new URL(`../dist/fast/${name}.cjs`, import.meta.url)));
  } catch (err) {
    if (err && err.code === "ENOENT") {
      if (optional) return false;
      notBuilt();
    }
    throw err;
  }
  try {
    await bundle.exports.main(args);
  } finally {
    bundle.settled();
  }
  return true;
}

/** Imports a bundle from dist/, with an actionable message when the checkout was never built. */
async function loadBuilt(entry) {
  try {
    return await import(`../dist/${entry}`);
  } catch (err) {
    if (err && err.code === "ERR_MODULE_NOT_FOUND" && String(err.message).includes(`dist/${entry}`)) notBuilt();
    throw err;
  }
}

function notBuilt() {
  process.stderr.write("tau: not built yet; run `npm ci` (or `npm run build`) in the tau checkout\n");
  process.exit(1);
}
