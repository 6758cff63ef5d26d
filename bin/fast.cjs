#!/usr/bin/env node
// The entry tau uses for the processes it starts itself (`daemon`, `ext <name>`): the same fast
// paths as bin/run.js, as CommonJS, so a spawned process skips the ES module loader's start-up
// (about 10-15 ms each). Anything else is handed to bin/run.js.
"use strict";
const { join } = require("node:path");
const { pathToFileURL } = require("node:url");

const argv = process.argv.slice(2);
const bundle =
  argv[0] === "daemon" ? "daemon" : argv[0] === "ext" && /^[a-z0-9-]+$/.test(argv[1] ?? "") ? `ext-${argv[1]}` : undefined;

if (bundle === undefined) {
  void import(pathToFileURL(join(__dirname, "run.js")).href);
} else {
  const { loadBundle } = require("./bundle-loader.cjs");
  let loaded;
  try {
    loaded = loadBundle(join(__dirname, "..", "dist", "fast", `${bundle}.cjs`));
  } catch (err) {
    if (!err || err.code !== "ENOENT") throw err;
  }
  if (loaded === undefined) {
    // no bundle of that name (an unknown extension, or an unbuilt checkout): bin/run.js explains
    void import(pathToFileURL(join(__dirname, "run.js")).href);
  } else {
    Promise.resolve(loaded.exports.main(argv.slice(bundle === "daemon" ? 1 : 2))).finally(() => loaded.settled());
  }
}
