// Loads one self-contained CommonJS bundle from dist/fast/ with a V8 code cache, so a spawned tau
// process skips most of its parse and compile work (Node 20 has no module compile cache of its own).
//
// The cache lives in dist/.v8-cache/ (rebuilt with dist/, never committed). A cache file is named by
// the bundle's name, the SHA-1 of the bundle's exact bytes, the Node version and the architecture, so
// a rebuilt bundle or another Node never picks up a stale cache; V8 additionally rejects data made
// with other flags. Any failure to read, use or write the cache is silent: the bundle then compiles
// as usual. A missing or rejected cache is produced once, after the entry's start-up work (when its
// main() settles, or at exit), and written atomically (temp file + rename).
//
// CommonJS on purpose: bin/tau.cjs requires it synchronously (a dynamic ES module import costs ~8 ms).
"use strict";
const { isAscii } = require("node:buffer");
const { createHash } = require("node:crypto");
const { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } = require("node:fs");
const { createRequire } = require("node:module");
const { dirname, join } = require("node:path");
const { Script, constants: vmConstants } = require("node:vm");

/** Set to "0" to load bundles without reading or writing the code cache. */
const CACHE_ENV = "TAU_CODE_CACHE";

/**
 * Loads `file` (absolute path of a .cjs bundle) and returns its exports, how the cache served it
 * (`hit`, `miss`, `rejected` or `off`), and `settled()`, to be called once the entry's start-up work
 * is done. Throws ENOENT when the bundle does not exist.
 */
function loadBundle(file) {
  const bytes = readFileSync(file);
  // An ASCII bundle (as the build emits) decodes much faster as latin1, into a one-byte string.
  const source = isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
  const useCache = process.env[CACHE_ENV] !== "0";
  let cachePath;
  let cached;
  if (useCache) {
    const key = createHash("sha1").update(bytes).digest("hex").slice(0, 20);
    const name = file.slice(dirname(file).length + 1).replace(/\.cjs$/, "");
    cachePath = join(dirname(file), "..", ".v8-cache", `${name}-${key}-${process.version}-${process.arch}.bin`);
    try {
      cached = readFileSync(cachePath);
    } catch {
      cached = undefined;
    }
  }
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  const script = new Script(wrapped, {
    filename: file,
    ...(cached ? { cachedData: cached } : {}),
    ...(vmConstants?.USE_MAIN_CONTEXT_DEFAULT_LOADER ? { importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER } : {}),
  });
  const fn = script.runInThisContext();
  const mod = { exports: {} };
  fn.call(mod.exports, mod.exports, createRequire(file), mod, file, dirname(file));
  const cache = !useCache ? "off" : cached === undefined ? "miss" : script.cachedDataRejected === true ? "rejected" : "hit";
  let pending = cache === "miss" || cache === "rejected";
  const settled = () => {
    if (!pending) return;
    pending = false;
    const tmp = `${cachePath}.${process.pid}.tmp`;
    try {
      const data = script.createCachedData();
      mkdirSync(dirname(cachePath), { recursive: true });
      writeFileSync(tmp, data);
      renameSync(tmp, cachePath);
    } catch {
      // a read-only installation or a full disk: run without a cache
      try {
        rmSync(tmp, { force: true });
      } catch {
        // nothing was written
      }
    }
  };
  if (pending) process.once("exit", settled);
  return { exports: mod.exports, cache, settled };
}

module.exports = { loadBundle };
