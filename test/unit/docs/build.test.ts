// The docs generator: a link to a missing record fails the build naming the record and the link,
// and two builds (different output paths, time zones and working folders) are byte-identical.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AggregateCodegenError } from "../../../codegen/errors.js";
import { generateSite, MARKER, writeSite } from "../../../codegen/docs/main.js";
import { REPO_ROOT } from "../../support/paths.js";

const TSX = join(REPO_ROOT, "node_modules", "tsx", "dist", "cli.mjs");
const DOCS_MAIN = join(REPO_ROOT, "codegen", "docs", "main.ts");
const temps: string[] = [];

function temp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function runDocs(args: string[], env: NodeJS.ProcessEnv = {}, cwd = REPO_ROOT) {
  return spawnSync(process.execPath, [TSX, DOCS_MAIN, ...args], { cwd, env: { ...process.env, ...env }, encoding: "utf8" });
}

function tree(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p).split(sep).join("/"), readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

/** A scratch repository root: records/ and spec/ copied, node_modules linked for the TypeSpec compile. */
function scratchRoot(): string {
  const root = temp("tau-docs-root-");
  cpSync(join(REPO_ROOT, "records"), join(root, "records"), { recursive: true });
  cpSync(join(REPO_ROOT, "spec"), join(root, "spec"), { recursive: true });
  symlinkSync(join(REPO_ROOT, "node_modules"), join(root, "node_modules"), "dir");
  return root;
}

describe("docs build", () => {
  it("[docs.build.missing-link-fails] a record linking to a missing record fails the build, naming the record and the link", async () => {
    const root = scratchRoot();
    const arch = join(root, "records", "ARCH-tau.md");
    writeFileSync(arch, readFileSync(arch, "utf8").replace(/^links: \[/m, "links: [SPEC-no-such-rule, "));
    const spec = join(root, "records", "SPEC-wire-protocol.md");
    writeFileSync(spec, `${readFileSync(spec, "utf8")}\nSee also [GATE-never-written](GATE-never-written.md).\n`);

    const err = await generateSite(root).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AggregateCodegenError);
    const messages = (err as AggregateCodegenError).problems.map((p) => p.message);
    expect(messages).toContain("records/ARCH-tau.md: links to missing record SPEC-no-such-rule");
    expect(messages).toContain("records/SPEC-wire-protocol.md: links to missing record GATE-never-written");

    // The command exits 1 with the same lines on stderr and writes nothing.
    const out = join(root, "site");
    const run = runDocs(["--root", root, "--out", out]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("docs: records/ARCH-tau.md: links to missing record SPEC-no-such-rule");
    expect(run.stderr).toContain("docs: records/SPEC-wire-protocol.md: links to missing record GATE-never-written");
    expect(run.stdout).toBe("");
    expect(existsSync(out)).toBe(false);
  });

  it("[docs.build.deterministic] two builds, in different folders, time zones and working folders, are byte-identical", async () => {
    const a = temp("tau-docs-a-");
    const b = join(temp("tau-docs-b-"), "nested", "out");
    const first = await writeSite(REPO_ROOT, a);
    expect(first.changed.length).toBe(first.files);
    const run = runDocs(["--root", REPO_ROOT, "--out", b], { TZ: "Pacific/Kiritimati", LC_ALL: "C", LANG: "C" }, tmpdir());
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);

    const ta = tree(a);
    const tb = tree(b);
    expect([...tb.keys()]).toEqual([...ta.keys()]);
    for (const [path, bytes] of ta) expect(tb.get(path)?.equals(bytes), path).toBe(true);
    expect(ta.has(MARKER)).toBe(true);
    expect(ta.has("index.html") && ta.has("matrix.html") && ta.has("style.css")).toBe(true);

    // No absolute path of the build machine leaks into the output.
    for (const [path, bytes] of ta) expect(bytes.includes(REPO_ROOT), path).toBe(false);

    // A rebuild into the same folder changes nothing.
    const again = await writeSite(REPO_ROOT, a);
    expect(again.changed).toEqual([]);
  });

  it("refuses to replace a folder that is not a previous docs build", async () => {
    const dir = temp("tau-docs-foreign-");
    writeFileSync(join(dir, "precious.txt"), "keep me\n");
    await expect(writeSite(REPO_ROOT, dir)).rejects.toThrow(/refusing to replace/);
    expect(readFileSync(join(dir, "precious.txt"), "utf8")).toBe("keep me\n");
  });
});
