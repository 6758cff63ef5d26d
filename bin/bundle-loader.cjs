// Loads one self-contained CommonJS bundle from dist/fast/ (or a validator file of dist/validators/) with a V8 code cache, so a spawned tau
// process skips most of its parse and compile work (Node 20 has no module compile cache of its own).
//
// The cache lives in dist/.v8-cache/ (rebuilt with dist/, never committed). A cache file is named by
// the bundle's name, a 64-bit hash of the bundle's exact bytes, the Node version and the architecture, so
// a rebuilt bundle or another Node never picks up a stale cache; V8 additionally rejects data made
// with other flags or for a source of another length. The build computes that hash and writes it as
// the bundle's last line (`//tau-code-key:<16 hex digits>`), which is read instead of hashing the
// bundle at every start (6-10 ms per process, plus an optimizing compile of the loop); a bundle
// without that line is hashed here. Any failure to read, use or write the cache is silent: the bundle then compiles
// as usual. A missing or rejected cache is produced once, after the entry's start-up work (when its
// main() settles, or at exit), and written atomically (temp file + rename).
//
// CommonJS on purpose: bin/tau.cjs requires it synchronously (a dynamic ES module import costs ~8 ms).
"use strict";
const { isAscii } = require("node:buffer");
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
    const key = builtKey(bytes) ?? contentKey(bytes);
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
  if (pending) atExit(settled);
  return { exports: mod.exports, cache, settled };
}

/** Caches still to write when the process exits: one exit listener for them all (a daemon loads a hundred validator files). */
const owedAtExit = [];

function atExit(settle) {
  if (owedAtExit.length === 0) process.once("exit", () => owedAtExit.splice(0).forEach((s) => s()));
  owedAtExit.push(settle);
}

const KEY_LINE = /\n\/\/tau-code-key:([0-9a-f]{16})\n?$/;

/** The key the build wrote as the bundle's last line (see `keyLine`), if there is one. */
function builtKey(bytes) {
  const m = KEY_LINE.exec(bytes.toString("latin1", Math.max(0, bytes.length - 48)));
  return m ? m[1] : undefined;
}

/** The last line the build appends to a bundle whose bytes (before it) are `bytes`. */
function keyLine(bytes) {
  return `\n//tau-code-key:${contentKey(bytes)}\n`;
}

/**
 * Two 32-bit FNV-1a hashes (different seeds and word orders) over the bytes and their length, as hex.
 * Not cryptographic: it only tells builds apart, the code in dist/ being trusted as much as its cache.
 * Plain arithmetic on purpose: loading node:crypto for a digest cost ~7 ms of every start.
 */
function contentKey(bytes) {
  let a = 0x811c9dc5 ^ bytes.length;
  let b = 0x01000193 ^ Math.imul(bytes.length, 0x9e3779b1);
  const words = bytes.length >>> 2;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < words; i++) {
    const w = view.getUint32(i << 2, true);
    a = Math.imul(a ^ w, 0x01000193);
    b = Math.imul(b ^ ((w >>> 16) | (w << 16)), 0x5bd1e995);
  }
  for (let i = words << 2; i < bytes.length; i++) {
    a = Math.imul(a ^ bytes[i], 0x01000193);
    b = Math.imul(b ^ bytes[i], 0x5bd1e995);
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}

module.exports = { loadBundle, keyLine };
