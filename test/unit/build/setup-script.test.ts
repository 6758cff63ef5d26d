// bin/setup, the README's first command's set-up (and .ci/run's): on a machine without the sandbox's
// programs it installs exactly what is missing with the package manager there is, and on a machine
// that has them it installs nothing. The machine is a PATH of real programs without bubblewrap,
// socat and ripgrep, and an apt-get that records what it was asked.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../support/paths.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A PATH folder with the programs bin/setup uses and `present` of the sandbox's, and an apt-get that logs its arguments. */
function machine(present: readonly string[]): { path: string; asked: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), "tau-setup-"));
  dirs.push(dir);
  const which = (name: string) => ["/usr/bin", "/bin", "/usr/sbin", "/sbin"].map((d) => join(d, name)).find((f) => existsSync(f));
  for (const name of ["bash", "sed", "mktemp", "tail", "rm", "id", "uname", "env", "dirname", "cat", ...present]) {
    const real = name === "node" ? process.execPath : which(name);
    if (real === undefined) throw new Error(`no ${name} on this machine`);
    symlinkSync(real, join(dir, name));
  }
  symlinkSync(process.execPath, join(dir, "node"));
  const log = join(dir, "apt-get.log");
  writeFileSync(join(dir, "apt-get"), `#!${which("bash")}\necho "$*" >> ${JSON.stringify(log)}\n`);
  chmodSync(join(dir, "apt-get"), 0o755);
  return { path: dir, asked: () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []) };
}

function setup(path: string, ...args: string[]) {
  return spawnSync(join(REPO_ROOT, "bin", "setup"), ["--no-npm", ...args], { env: { PATH: path, HOME: tmpdir() }, encoding: "utf8" });
}

describe("bin/setup", () => {
  it.runIf(process.platform === "linux" && process.getuid?.() === 0)("[setup.installs-what-is-missing] installs bubblewrap, socat and ripgrep where they are missing, and nothing where they are there", () => {
    const bare = machine(["setpriv", "nsenter"]);
    const r = setup(bare.path);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("installing bubblewrap socat ripgrep");
    expect(bare.asked()).toEqual(["update -qq", "install -y -qq --no-install-recommends bubblewrap socat ripgrep"]);

    const ready = machine(["setpriv", "nsenter", "bwrap", "socat", "rg"]);
    const again = setup(ready.path);
    expect(again.status, again.stderr).toBe(0);
    expect(ready.asked()).toEqual([]);
  });

  it("[setup.refuses-unknown-options] an unknown option is refused with the known ones, installing nothing", () => {
    const bare = machine(["setpriv", "nsenter"]);
    const r = setup(bare.path, "--bogus");
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown option --bogus (known: --ci, --no-npm)");
    expect(bare.asked()).toEqual([]);
  });
});
