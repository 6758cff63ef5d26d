// Bundles tau into dist/ with esbuild, so a spawned tau process loads as little as possible.
//
// - dist/fast/*.cjs: the entries bin/tau.cjs answers before the command framework (`tau run`,
//   `tau daemon`, `tau ext <name>`). Each is one self-contained CommonJS file with its dependencies
//   inlined (no module resolution at start-up, nothing it does not use), loaded through
//   bin/bundle-loader.cjs with a V8 code cache.
// - dist/cli/*.js (+ shared chunks in dist/chunks/): the oclif command framework path, ESM with
//   node_modules external; dist/ext/main.js answers `tau ext` for a name without a bundle of its own.
// - dist/validators/<Name>.cjs: one self-contained file per generated schema validator, which
//   neither of the above inlines: generated/validators.js loads each on its first call.
// - bin/tau.cjs's head (its shell lines and the constants after them), written from the launch facts
//   (handwritten/cli/launcher-script.ts) when they changed. `tsx build.ts --check` writes nothing and
//   fails when the committed head differs; so does a test.
//
// What a process's start-up may cost, and the bench that watches it: records/DECISION-startup-budget.md.
import { build, type Metafile, type Plugin } from "esbuild";
import { appendFileSync, chmodSync, readFileSync, readdirSync, existsSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { keyLine } from "./bin/bundle-loader.cjs";
import { withLauncherHead } from "./handwritten/cli/launcher-script.js";
import { BRIDGE_ID_HOOK, BWRAP_VERSION_HOOK, FORGE_LOADED_HOOK, PROXY_TOKEN_HOOK } from "./handwritten/extensions/shell/sandbox/runtime-hooks.js";
import { fileURLToPath } from "node:url";
import { dirname, join, relative, sep } from "node:path";

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
 * cbor.ts loads cbor-x's no-eval build through `createRequire(import.meta.url)`. In a CommonJS bundle
 * that becomes a plain `require`, so esbuild inlines the dependency instead of resolving it from
 * node_modules at run time.
 */
const inlineCreateRequire: Plugin = {
  name: "inline-create-require",
  setup(b) {
    b.onLoad({ filter: /protocol[\\/]cbor\.ts$/ }, (args) => {
      const text = readFileSync(args.path, "utf8").replace(/createRequire\(import\.meta\.url\)\(/g, "require(");
      return { contents: text, loader: "ts" };
    });
  },
};

/**
 * The MCP SDK's HTTP client reaches `pkce-challenge`, whose Node <18 fallback is a dynamic
 * `import("node:crypto")` (never taken on Node 20, where `globalThis.crypto` exists). A fast bundle may
 * keep no dynamic import (see buildAll), so the fallback becomes a plain `require`.
 */
const pkceWithoutDynamicImport: Plugin = {
  name: "pkce-without-dynamic-import",
  setup(b) {
    b.onLoad({ filter: /pkce-challenge[\\/]dist[\\/]index\.node\.js$/ }, (args) => {
      const text = readFileSync(args.path, "utf8");
      const next = text.replace('import("node:crypto")', 'Promise.resolve(require("node:crypto"))');
      if (next === text) throw new Error(`${args.path}: expected its import("node:crypto") fallback`);
      return { contents: next, loader: "js" };
    });
  },
};

/**
 * The sandbox runtime (`@anthropic-ai/sandbox-runtime`, ES modules) bundled on its own as
 * dist/fast/sandbox-runtime.cjs, so the shell extension loads it with a code cache instead of
 * resolving and compiling its module graph at every start. It finds its helper programs (the seccomp
 * filter, its vendor folder) from `import.meta.url`: each file's own URL is kept, resolved at run time
 * from wherever node_modules holds the package. node-forge is required on first use (forgeOnFirstUse),
 * bubblewrap's version is kept between starts (bwrapVersionKept), and the proxy's credential is tau's (proxyTokenFromTau). Its `whichSync` runs `which` as
 * a process (at set-up for each program, and for every command's shell): it looks on PATH itself,
 * as `which` does, without a process. Its wait for its bridges looks every 5 ms (pollBridgesFinely).
 */
const RUNTIME_DIST = /@anthropic-ai[\\/]sandbox-runtime[\\/]dist[\\/](.*\.js)$/;
const WHICH_WITHOUT_A_PROCESS = `import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
/** The first executable file named \`bin\` on PATH (a name with a slash: that file), or null. */
export function whichSync(bin) {
  const executable = (file) => {
    try {
      if (!statSync(file).isFile()) return false;
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (bin.includes("/")) return executable(bin) ? bin : null;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir !== "" && executable(join(dir, bin))) return join(dir, bin);
  }
  return null;
}
`;
/**
 * The runtime waits for its socat bridges' sockets by looking 5 times, 0, 0, 100, 200 and 300 ms
 * apart: bridges up a moment after the second look cost set-up 100 ms. The same 600 ms are looked
 * through every 5 ms instead.
 */
function pollBridgesFinely(text: string, file: string): string {
  const attempts = "    const maxAttempts = 5;\n    for (let i = 0; i < maxAttempts; i++) {\n        if (!httpBridgeProcess.pid ||";
  const pause = "        await new Promise(resolve => setTimeout(resolve, i * 100));";
  if (!text.includes(attempts) || !text.includes(pause)) throw new Error(`${file}: expected the bridges' wait (5 looks, i * 100 ms apart)`);
  return text.replace(attempts, attempts.replace("maxAttempts = 5", "maxAttempts = 121")).replace(pause, "        await new Promise(resolve => setTimeout(resolve, 5));");
}

/**
 * The runtime names its bridges' sockets with a random id just before it starts them; it hands tau
 * the id first when tau asks to be told (runtime-leftovers.ts, BRIDGE_ID_HOOK), so the reaper knows
 * both socket files before any process exists that could leave one.
 */
function nameBridgesAhead(text: string, file: string): string {
  const id = "    const socketId = randomBytes(8).toString('hex');";
  if (text.split(id).length !== 2) throw new Error(`${file}: expected the bridges' socket id (randomBytes(8)) once`);
  return text.replace(id, `    const socketId = ((made) => globalThis[Symbol.for(${JSON.stringify(BRIDGE_ID_HOOK)})]?.(made) ?? made)(randomBytes(8).toString('hex'));`);
}

/**
 * node-forge (the runtime's TLS interception, which tau does not turn on) is required on first use,
 * not initialized at load: the import, the namespaces its files take from it at load
 * (`const { pki } = forge;`), the tables of constants taken from them and the one function taken
 * from one become forwarding proxies. The first use sets FORGE_LOADED_HOOK, so a test can tell that loading did not.
 */
function forgeOnFirstUse(text: string, file: string): string {
  const load = `(() => (globalThis[Symbol.for(${JSON.stringify(FORGE_LOADED_HOOK)})] = true, require("node-forge")))()`;
  const lazy = (of: string): string => `new Proxy({}, { get: (_t, k) => ${of}[k], set: (_t, k, v) => ((${of}[k] = v), true), has: (_t, k) => k in ${of} })`;
  let next = text.replace("import forge from 'node-forge';", `const forge = ${lazy(load)};`);
  if (next === text) throw new Error(`${file}: expected \`import forge from 'node-forge';\``);
  next = next.replace(/^const \{ ([\w, ]+) \} = forge;$/m, (_all, names: string) =>
    `const ${names.split(",").map((n) => `${n.trim()} = ${lazy(`forge.${n.trim()}`)}`).join(", ")};`,
  );
  next = next.replace("const getTBSCertificate = pki.getTBSCertificate;", "const getTBSCertificate = (...a) => pki.getTBSCertificate(...a);");
  // Tables of constants (`const C = asn1.Class;`): read through on use as well.
  next = next.replace(/^const (\w+) = (asn1\.\w+);$/gm, (_all, name: string, of: string) => `const ${name} = ${lazy(of)};`);
  if (/^const .* = (forge|pki|asn1|md|random|util)\.[\w.]+;$/m.test(next)) throw new Error(`${file}: a node-forge member taken at load`);
  return next;
}

/**
 * The runtime asks `bwrap --version` (a process, waited for) at every start, for a warning about a
 * bubblewrap older than 0.5.0 and nothing else: it asks tau first (BWRAP_VERSION_HOOK), which
 * keeps the answer beside the program's identity (bwrap-version.ts), and tells tau what it found.
 */
function bwrapVersionKept(text: string, file: string): string {
  const hook = `globalThis[Symbol.for(${JSON.stringify(BWRAP_VERSION_HOOK)})]`;
  const head = "function probeBwrapVersion(bwrap) {\n    const cached = bwrapVersions.get(bwrap);\n    if (cached !== undefined)\n        return cached;\n";
  const kept = "    bwrapVersions.set(bwrap, version);\n";
  if (text.split(head).length !== 2 || text.split(kept).length !== 2) throw new Error(`${file}: expected probeBwrapVersion's cache look-up and store once`);
  return text
    .replace(head, `${head}    const known = ${hook}?.get(bwrap);\n    if (typeof known === "string") {\n        bwrapVersions.set(bwrap, known);\n        return known;\n    }\n`)
    .replace(kept, `${kept}    if (version !== null) ${hook}?.set(bwrap, version);\n`);
}

/**
 * At every wrap the runtime runs ripgrep to list protected names below its working directory; tau
 * gives it a private empty folder as that (lifecycle.ts, runtimeCwd), where ripgrep could list
 * nothing. A folder with no entries at all is answered without the process; any other is searched.
 */
function emptyFolderNotSearched(text: string, file: string): string {
  const call = "        matches = await ripGrep([";
  if (text.split(call).length !== 2) throw new Error(`${file}: expected linuxGetMandatoryDenyPaths' ripGrep call once`);
  const empty = '(() => { try { return fs.readdirSync(cwd).length === 0; } catch { return false; } })()';
  return text.replace(call, `        matches = ${empty} ? [] : await ripGrep([`);
}

/**
 * The runtime mints its proxy's credential (what every wrap's proxy variables carry) at each start:
 * it takes tau's instead when tau offers one (PROXY_TOKEN_HOOK), so a wrap kept from an earlier
 * start is made this start's by putting the credential in (kept-wrap.ts).
 */
function proxyTokenFromTau(text: string, file: string): string {
  const mint = "                    : randomBytes(16).toString('hex');";
  if (text.split(mint).length !== 2) throw new Error(`${file}: expected the proxy credential (randomBytes(16)) once`);
  return text.replace(mint, `                    : (globalThis[Symbol.for(${JSON.stringify(PROXY_TOKEN_HOOK)})]?.() ?? randomBytes(16).toString('hex'));`);
}

const sandboxRuntimeOwnFiles: Plugin = {
  name: "sandbox-runtime-own-files",
  setup(b) {
    b.onLoad({ filter: RUNTIME_DIST }, (args) => {
      const rel = (RUNTIME_DIST.exec(args.path)?.[1] ?? "").replace(/\\/g, "/");
      const own = `require("node:url").pathToFileURL(require("node:path").join(require("node:path").dirname(require("node:module").createRequire(__filename).resolve("@anthropic-ai/sandbox-runtime")), ${JSON.stringify(rel)})).href`;
      if (rel === "utils/which.js") return { contents: WHICH_WITHOUT_A_PROCESS, loader: "js" };
      let text = readFileSync(args.path, "utf8").replace(/import\.meta\.url/g, own);
      if (rel === "sandbox/linux-sandbox-utils.js") text = emptyFolderNotSearched(nameBridgesAhead(pollBridgesFinely(text, args.path), args.path), args.path);
      if (/from 'node-forge'/.test(text)) text = forgeOnFirstUse(text, args.path);
      if (rel === "sandbox/linux-sandbox-utils.js") text = bwrapVersionKept(text, args.path);
      if (rel === "sandbox/sandbox-manager.js") text = proxyTokenFromTau(text, args.path);
      return { contents: text, loader: "js" };
    });
  },
};

/**
 * generated/validators.js loads each schema's validator from `./validators/<Name>.cjs` beside it
 * (generated/validators/ when run from source). Every bundled output that contains it sits one
 * folder below dist/ (dist/fast/, dist/cli/, dist/ext/, dist/chunks/: checked after the build, see
 * checkValidatorsDepth), and `import.meta.url` is that output's own URL, so there the folder is
 * dist/validators/, one level up, and the validator files load through bin/bundle-loader.cjs with
 * a code cache (two folders up). The lines are written by codegen/validators.ts.
 */
const SOURCE_VALIDATORS_DIR = 'const DIR = "./validators/";';
const DIST_VALIDATORS_DIR = 'const DIR = "../validators/";';
/** From dist/<folder>/, the loader with a code cache (bin/bundle-loader.cjs): each validator file then compiles from a cache. */
const SOURCE_VALIDATORS_LOADER = "const LOADER = undefined;";
const DIST_VALIDATORS_LOADER = 'const LOADER = "../../bin/bundle-loader.cjs";';
const validatorsFromDist: Plugin = {
  name: "validators-from-dist",
  setup(b) {
    b.onLoad({ filter: /generated[\\/]validators\.js$/ }, (args) => {
      const text = readFileSync(args.path, "utf8");
      for (const line of [SOURCE_VALIDATORS_DIR, SOURCE_VALIDATORS_LOADER]) if (text.split(line).length !== 2) throw new Error(`${args.path}: expected the line ${line} once`);
      return { contents: text.replace(SOURCE_VALIDATORS_DIR, DIST_VALIDATORS_DIR).replace(SOURCE_VALIDATORS_LOADER, DIST_VALIDATORS_LOADER), loader: "js" };
    });
  },
};

/**
 * Fails the build if an output that loads validators is not exactly one folder below dist/, if one
 * inlines a per-schema file, or if no output loads them at all (the check would then see nothing).
 */
function checkValidatorsDepth(meta: Metafile, staging: string): void {
  let loaders = 0;
  for (const [out, info] of Object.entries(meta.outputs)) {
    const inputs = Object.keys(info.inputs);
    if (inputs.some((i) => /^generated\/validators\/.+\.cjs$/.test(i))) throw new Error(`${out} inlines a per-schema validator`);
    if (!inputs.includes("generated/validators.js")) continue;
    // Output paths in the metafile are relative to absWorkingDir (root).
    const rel = relative(staging, join(root, out)).split(sep);
    if (rel.length !== 2 || rel[0] === "..") throw new Error(`${out} loads validators but is not one folder below dist/ (${rel.join("/")})`);
    loaders++;
  }
  if (loaders === 0) throw new Error("no bundled output contains generated/validators.js");
}

/**
 * esbuild escapes every non-ASCII character in code (its default `charset: "ascii"`) but keeps the
 * ones in the comments it preserves and in regular expressions. Escaping those too makes each bundle
 * pure ASCII, which the loader decodes several times faster (latin1, one-byte string) than UTF-8.
 * Line numbers are kept.
 */
function asciiComments(file: string): void {
  const text = readFileSync(file, "utf8");
  const ascii = asciiEscaped(text);
  if (ascii !== text) writeFileSync(file, ascii);
}

/**
 * `text` with each non-ASCII UTF-16 code unit written `\uXXXX`. Not `\u{…}`: in a regular expression
 * without the `u` flag that spells the letter u repeated, so `/[‘]/` would come to match `u`, `{`,
 * digits and `}`. Four-digit escapes of code units mean the same in strings, templates, identifiers
 * and every regular expression (a surrogate pair is one code point under `u`, two units without it).
 */
export function asciiEscaped(text: string): string {
  return text.replace(/[^\x00-\x7f]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

const TAU_BIN = join(root, "bin", "tau.cjs");

/**
 * bin/tau.cjs with its head written from the launch facts: `"unchanged"`, `"written"`, or with
 * `check`, `"differs"` (nothing is written). Written atomically, keeping the file's mode, so a
 * concurrent `tau` reads either the old file or the new one.
 */
export function writeLauncherHead(check = false): "unchanged" | "written" | "differs" {
  const text = readFileSync(TAU_BIN, "utf8");
  const next = withLauncherHead(text);
  if (next === text) return "unchanged";
  if (check) return "differs";
  const tmp = `${TAU_BIN}.${process.pid}.tmp`;
  writeFileSync(tmp, next);
  chmodSync(tmp, statSync(TAU_BIN).mode & 0o7777);
  renameSync(tmp, TAU_BIN);
  return "written";
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
  const validatorFiles = readdirSync(join(root, "generated", "validators"))
    .filter((f) => f.endsWith(".cjs"))
    .sort();
  const [esm, fast] = await Promise.all([
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
      // One folder below dist/, like the entries (see validatorsFromDist).
      chunkNames: "chunks/[name]-[hash]",
      format: "esm",
      packages: "external",
      metafile: true,
      plugins: [validatorsFromDist],
    }),
    build({
      ...common,
      entryPoints: {
        "fast/run": "handwritten/cli/run/main.ts",
        // Loaded by fast/run after it has started the daemon (see run/main.ts).
        "fast/run-prompt": "handwritten/cli/run/prompt.ts",
        // Loaded by fast/run-prompt only when its daemon exited before it started (run/config.ts).
        "fast/run-config": "handwritten/cli/run/config.ts",
        // The daemon the `tau` launcher script starts for a `tau run` beside its client (bin/tau.cjs).
        "fast/run-early-daemon": "handwritten/entries/run-early-daemon.ts",
        // The daemon starts its extensions from a first part, then loads the harness (daemon-start.ts).
        "fast/daemon": "handwritten/harness/daemon-start.ts",
        "fast/daemon-harness": "handwritten/harness/daemon-main.ts",
        ...extensionEntries(),
        // Loaded by the shell extension when it sets its sandbox up (sandbox/lifecycle.ts).
        "fast/sandbox-runtime": "node_modules/@anthropic-ai/sandbox-runtime/dist/index.js",
        // Loaded by the web extension on the first HTML page it fetches (web/html.ts).
        "fast/web-html": "handwritten/extensions/web/html-libs.ts",
      },
      outExtension: { ".js": ".cjs" },
      format: "cjs",
      // Less to read, hash and deserialize at every start; identifiers stay, so stacks stay legible.
      minifyWhitespace: true,
      minifySyntax: true,
      // `import.meta.url` of the source file becomes the bundle's own URL (same folder depth as before).
      define: { "import.meta.url": "__tau_bundle_url" },
      banner: { js: 'var __tau_bundle_url = require("node:url").pathToFileURL(__filename).href;' },
      metafile: true,
      plugins: [inlineCreateRequire, validatorsFromDist, pkceWithoutDynamicImport, sandboxRuntimeOwnFiles],
    }),
    // Each validator file on its own, with ajv's small runtime helper inlined: loading one resolves
    // nothing from node_modules.
    build({
      ...common,
      entryPoints: validatorFiles.map((f) => ({ in: `generated/validators/${f}`, out: `validators/${f.replace(/\.cjs$/, "")}` })),
      outExtension: { ".js": ".cjs" },
      format: "cjs",
      sourcemap: false,
      minifyWhitespace: true,
      minifySyntax: true,
    }),
  ]);
  checkValidatorsDepth(esm.metafile, staging);
  checkValidatorsDepth(fast.metafile, staging);
  for (const dir of ["fast", "validators"]) {
    for (const file of readdirSync(join(staging, dir))) if (file.endsWith(".cjs")) asciiComments(join(staging, dir, file));
  }
  // Each fast bundle ends with its code-cache key, so no process hashes it at start-up. A dynamic
  // import() left in one (esbuild keeps those of external modules) fails in a bundle compiled with a
  // code cache (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING): refuse it here, never intermittently at run time.
  // The validator files too: each is loaded with the same code cache (validators.js, LOADER).
  for (const file of readdirSync(join(staging, "validators"))) if (file.endsWith(".cjs")) appendFileSync(join(staging, "validators", file), keyLine(readFileSync(join(staging, "validators", file))));
  for (const file of readdirSync(join(staging, "fast"))) {
    if (!file.endsWith(".cjs")) continue;
    const bytes = readFileSync(join(staging, "fast", file));
    const dynamicImport = /(?<![\w$.])import\(\s*["'`][^"'`]*/.exec(bytes.toString("latin1"));
    if (dynamicImport) throw new Error(`dist/fast/${file} keeps a dynamic import (${dynamicImport[0]}…): load a built-in lazily with builtin() (startup/builtin.ts)`);
    appendFileSync(join(staging, "fast", file), keyLine(bytes));
  }
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
  if (process.argv.includes("--check")) {
    if (writeLauncherHead(true) === "differs") {
      process.stderr.write("build: bin/tau.cjs's head differs from what the launch facts give; run `npm run build` and commit it\n");
      process.exitCode = 1;
    }
  } else {
    if (writeLauncherHead() === "written") process.stderr.write("build: wrote bin/tau.cjs's head from the launch facts\n");
    await buildAll();
  }
}
