#!/bin/sh
":" //; if [ "${NODE_EXTRA_CA_CERTS+set}" = set ] && case " $NODE_OPTIONS " in *" --use-openssl-ca"*) false;; esac; then export TAU_NODE_EXTRA_CA_CERTS="$NODE_EXTRA_CA_CERTS"; unset NODE_EXTRA_CA_CERTS; else unset TAU_NODE_EXTRA_CA_CERTS; fi; exec node "$0" "$@"
// tau's entry point, started by /bin/sh and then by node: the line above is a shell command to sh
// and a string then a comment to JavaScript. It hands NODE_EXTRA_CA_CERTS to this node under another
// name (see the first statement below) and runs this file with node from PATH, as `env node` did.
//
// CommonJS on purpose: an ES module entry costs 10-30 ms of loader start-up before the first line
// runs. Hot paths are answered here before the command framework (oclif) is loaded: `--version`,
// `tau run`, and the processes tau starts itself (`daemon`, `ext <name>`) run a self-contained bundle
// from dist/fast/ with a V8 code cache; the interactive UI (`tau`, `attach`, `resume`) loads its own
// small first chunk; everything else goes to the command framework.
"use strict";
const { join } = require("node:path");
const { pathToFileURL } = require("node:url");

// NODE_EXTRA_CA_CERTS makes node read and parse every root certificate before its first line runs
// (60 ms on a small machine), though only a TLS client needs them. tau's own processes are started
// with it renamed to TAU_NODE_EXTRA_CA_CERTS (bin/tau.cjs above, config/env.ts for the daemon and
// first-party extensions); it is put back here, so every process this one starts (a shell command,
// another extension) sees the user's variable unchanged, and the one TLS client (the provider's
// egress) adds the certificates itself, on its first https connection.
const deferredCaCerts = process.env.TAU_NODE_EXTRA_CA_CERTS;
if (deferredCaCerts !== undefined) {
  delete process.env.TAU_NODE_EXTRA_CA_CERTS;
  process.env.NODE_EXTRA_CA_CERTS = deferredCaCerts;
  process[Symbol.for("tau.deferred-extra-ca-certs")] = deferredCaCerts;
}

const argv = process.argv.slice(2);
const helpWanted = argv.includes("--help") || argv.includes("-h");

if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  const pkg = JSON.parse(require("node:fs").readFileSync(join(__dirname, "..", "package.json"), "utf8"));
  process.stdout.write(`tau/${pkg.version} ${process.platform}-${process.arch} node-${process.version}\n`);
} else if (argv[0] === "run" && !helpWanted) {
  runFast("run", argv.slice(1));
} else if (argv[0] === "daemon") {
  runFast("daemon", argv.slice(1));
} else if (argv[0] === "ext" && /^[a-z0-9-]+$/.test(argv[1] ?? "") && runFast(`ext-${argv[1]}`, [], true)) {
  // a first-party extension with a bundle of its own
} else if (argv[0] === "ext") {
  // an unknown extension name: the generic entry explains
  loadBuilt("ext/main.js").then((ext) => ext.main(argv.slice(1)));
} else if (argv.length === 0 || argv[0] === "--harness-config" || ((argv[0] === "attach" || argv[0] === "resume") && !helpWanted)) {
  loadBuilt("cli/tui-main.js").then((tui) => tui.main(argv));
} else {
  // the command framework finds package.json from this file's URL
  loadBuilt("cli/main.js").then((cli) => cli.main(pathToFileURL(__filename).href));
}

/**
 * Runs `dist/fast/<name>.cjs` and its main(args). Returns false when `optional` and there is no such
 * bundle.
 */
function runFast(name, args, optional = false) {
  const { loadBundle } = require("./bundle-loader.cjs");
  let bundle;
  try {
    bundle = loadBundle(join(__dirname, "..", "dist", "fast", `${name}.cjs`));
  } catch (err) {
    if (err && err.code === "ENOENT") {
      if (optional) return false;
      notBuilt();
    }
    throw err;
  }
  Promise.resolve(bundle.exports.main(args)).finally(() => bundle.settled());
  return true;
}

/** Imports an ES module from dist/, with an actionable message when the checkout was never built. */
function loadBuilt(entry) {
  return import(pathToFileURL(join(__dirname, "..", "dist", entry)).href).catch((err) => {
    if (err && err.code === "ERR_MODULE_NOT_FOUND" && String(err.message).includes(`dist/${entry}`)) notBuilt();
    throw err;
  });
}

function notBuilt() {
  process.stderr.write("tau: not built yet; run `npm ci` (or `npm run build`) in the tau checkout\n");
  process.exit(1);
}
