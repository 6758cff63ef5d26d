// The fast-path bundle loader (bin/bundle-loader.cjs): a V8 code cache keyed by the bundle's bytes
// (hashed by the build, or here), the Node version and the architecture; stale, corrupt or unwritable caches never change behaviour.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { keyLine, loadBundle } from "../../../bin/bundle-loader.cjs";

const LOADER = fileURLToPath(new URL("../../../bin/bundle-loader.cjs", import.meta.url));

/**
 * Loads a bundle in a fresh Node process (V8 keeps compiled scripts in memory per process, so only a
 * new process shows what the on-disk cache does), calls settled(), and reports the cache status and
 * the bundle's answer.
 */
function loadFresh(file: string, env: NodeJS.ProcessEnv = {}): { cache: string; answer: number } {
  const code = `const { loadBundle } = require(${JSON.stringify(LOADER)});
const b = loadBundle(${JSON.stringify(file)});
process.stdout.write(JSON.stringify({ cache: b.cache, answer: b.exports.answer() }));
b.settled();`;
  const out = execFileSync(process.execPath, ["-e", code], { env: { ...process.env, ...env }, encoding: "utf8" });
  return JSON.parse(out) as { cache: string; answer: number };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A dist-like folder with one bundle at <root>/fast/<name>.cjs; the cache goes to <root>/.v8-cache. */
function bundle(source: string, name = "entry"): { root: string; file: string; cacheDir: string } {
  const root = mkdtempSync(join(tmpdir(), "tau-loader-"));
  dirs.push(root);
  mkdirSync(join(root, "fast"));
  const file = join(root, "fast", `${name}.cjs`);
  writeFileSync(file, source);
  return { root, file, cacheDir: join(root, ".v8-cache") };
}

const answer = (n: number) => `exports.answer = () => ${n};\nexports.file = __filename;\n`;

describe("bundle loader code cache", () => {
  it("compiles without a cache, writes one once settled, and uses it on the next load", () => {
    const b = bundle(answer(41));
    const first = loadBundle(b.file);
    expect(first.cache).toBe("miss");
    expect((first.exports.answer as () => number)()).toBe(41);
    expect(first.exports.file).toBe(b.file);
    first.settled();
    first.settled(); // once only
    const files = readdirSync(b.cacheDir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(new RegExp(`^entry-[0-9a-f]{16}-${process.version.replace(/\./g, "\\.")}-${process.arch}\\.bin$`));
    expect(loadFresh(b.file)).toEqual({ cache: "hit", answer: 41 });
  });

  it("never serves a cache to a changed bundle, even one of the same length", () => {
    const b = bundle(answer(41));
    loadBundle(b.file).settled();
    writeFileSync(b.file, answer(42)); // same byte length, other code
    expect(loadFresh(b.file)).toEqual({ cache: "miss", answer: 42 });
  });

  it("takes the key the build wrote as the last line instead of hashing, and it is the hash of the code before it", () => {
    const code = answer(5);
    const plain = bundle(code, "plain");
    loadBundle(plain.file).settled();
    const [plainCache] = readdirSync(plain.cacheDir);
    const key = /^plain-([0-9a-f]{16})-/.exec(plainCache as string)?.[1];
    expect(keyLine(Buffer.from(code))).toBe(`\n//tau-code-key:${key}\n`);

    const keyed = bundle(code + keyLine(Buffer.from(code)), "keyed");
    loadBundle(keyed.file).settled();
    expect(readdirSync(keyed.cacheDir)).toEqual([`keyed-${key}-${process.version}-${process.arch}.bin`]);
    expect(loadFresh(keyed.file)).toEqual({ cache: "hit", answer: 5 });

    // A rebuilt bundle has another key: its old cache is never looked at.
    writeFileSync(keyed.file, answer(6) + keyLine(Buffer.from(answer(6))));
    expect(loadFresh(keyed.file)).toEqual({ cache: "miss", answer: 6 });
    expect(readdirSync(keyed.cacheDir)).toHaveLength(2);
  });

  it("falls back to a plain compile on a corrupt cache file and replaces it", () => {
    const b = bundle(answer(7));
    loadFresh(b.file);
    const [name] = readdirSync(b.cacheDir);
    writeFileSync(join(b.cacheDir, name as string), Buffer.from("not a v8 code cache"));
    expect(loadFresh(b.file)).toEqual({ cache: "rejected", answer: 7 });
    expect(loadFresh(b.file)).toEqual({ cache: "hit", answer: 7 });
  });

  it("runs without a cache where it cannot write one, and when TAU_CODE_CACHE=0", () => {
    const b = bundle(answer(3));
    writeFileSync(b.cacheDir, "a file where the cache folder would go"); // unwritable, even for root
    expect(loadFresh(b.file)).toEqual({ cache: "miss", answer: 3 });
    expect(readdirSync(b.root).sort()).toEqual([".v8-cache", "fast"]);
    expect(readdirSync(join(b.root, "fast"))).toEqual(["entry.cjs"]); // no temp file left behind
    const c = bundle(answer(4));
    expect(loadFresh(c.file, { TAU_CODE_CACHE: "0" })).toEqual({ cache: "off", answer: 4 });
    expect(readdirSync(c.root)).toEqual(["fast"]);
  });

  it("reports a missing bundle as ENOENT", () => {
    const b = bundle(answer(1));
    expect(() => loadBundle(join(b.root, "fast", "nope.cjs"))).toThrow(expect.objectContaining({ code: "ENOENT" }) as unknown as Error);
  });
});
