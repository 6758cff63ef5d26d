// The project walks around a sandboxed command and the reused wrap's key (SPEC-sandbox, "Created
// during a command", "Reusing the wrap"), on real files.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createdDuring, gitConfigKeys, isGitControlPath, scanProject } from "../../../handwritten/extensions/shell/sandbox/project-scan.js";
import { diskKey, planMounts } from "../../../handwritten/extensions/shell/sandbox/wrap-cache.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function project(): string {
  const d = mkdtempSync(join(tmpdir(), "tau-scan-"));
  dirs.push(d);
  return d;
}
function file(path: string, text = ""): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

describe("the project walk", () => {
  it("names every git folder's control files, nested, submodules' and worktrees' included", () => {
    for (const p of ["/p/.git/hooks", "/p/.git/hooks/pre-commit", "/p/.git/config", "/p/.git/commondir", "/p/a/b/.git/config", "/p/.git/modules/m/hooks/x", "/p/.git/modules/a/modules/b/config", "/p/.git/worktrees/w/commondir"]) {
      expect(isGitControlPath(p), p).toBe(true);
    }
    for (const p of ["/p/.git/HEAD", "/p/.git/objects/ab/cd", "/p/.gitconfig-notes", "/p/hooks/config", "/p/.git/configure"]) expect(isGitControlPath(p), p).toBe(false);
  });

  it("finds credential files to three levels and git folders to six, bare and module ones too, never in node_modules", () => {
    const p = project();
    file(join(p, ".env"));
    file(join(p, "a", "b", "c.pem"));
    file(join(p, "a", "b", "c", "d.key")); // four levels down: not looked for
    file(join(p, "node_modules", "x", ".env"));
    file(join(p, "a", "b", "c", "d", "e", ".git", "HEAD"));
    file(join(p, "bare", "HEAD"));
    mkdirSync(join(p, "bare", "objects"));
    mkdirSync(join(p, "bare", "refs"));
    file(join(p, ".git", "HEAD"));
    file(join(p, ".git", "modules", "m", "HEAD"));
    file(join(p, ".git", "modules", "m", "modules", "n", "HEAD"));
    const s = scanProject(p);
    expect([...s.credentials].sort()).toEqual([join(p, ".env"), join(p, "a", "b", "c.pem")]);
    expect([...s.gitDirs].sort()).toEqual([join(p, ".git"), join(p, ".git", "modules", "m"), join(p, ".git", "modules", "m", "modules", "n"), join(p, "a", "b", "c", "d", "e", ".git"), join(p, "bare")].sort());
    expect(s.truncated).toBe(false);
  });

  it("reads git config keys as git does, and refuses what it cannot read", () => {
    expect(gitConfigKeys('[core]\n\tbare = false\n[remote "origin"]\n\turl = x\n# c\n')).toEqual(["core.bare", "remote.origin.url"]);
    expect(gitConfigKeys("[core]\n\tFsMonitor = evil\n")).toEqual(["core.fsmonitor"]);
    expect(gitConfigKeys("[core] fsmonitor = evil\n")).toBeUndefined();
    expect(gitConfigKeys("fsmonitor = evil\n")).toBeUndefined();
  });

  it("judges what a command created: credentials, a new git folder's hooks and unsafe config, a commondir, a .git pointer", () => {
    const p = project();
    file(join(p, ".git", "HEAD"));
    file(join(p, ".git", "hooks", "pre-commit.sample"));
    file(join(p, ".env"));
    const before = scanProject(p);
    file(join(p, ".env.local"));
    file(join(p, "made", ".git", "HEAD"));
    file(join(p, "made", ".git", "hooks", "post-checkout"));
    file(join(p, "made", ".git", "hooks", "pre-push.sample"));
    file(join(p, "made", ".git", "config"), "[core]\n\tfsmonitor = evil\n");
    file(join(p, "plain", ".git", "HEAD"));
    file(join(p, "plain", ".git", "config"), '[core]\n\trepositoryformatversion = 0\n[remote "o"]\n\turl = https://x\n');
    file(join(p, ".git", "commondir"), "/tmp/elsewhere\n");
    file(join(p, "ptr", ".git"), "gitdir: /tmp/elsewhere\n");
    file(join(p, "wt", ".git"), `gitdir: ${join(p, "made", ".git")}\n`);
    const found = createdDuring(before, scanProject(p), { credentials: true }).map((f) => f.path.slice(p.length + 1)).sort();
    expect(found).toEqual([".env.local", ".git/commondir", "made/.git/config", "made/.git/hooks/post-checkout", "ptr/.git"]);
    expect(createdDuring(before, scanProject(p), { credentials: false }).some((f) => f.path.endsWith(".env.local"))).toBe(false);
  });
});

describe("the reused wrap's key", () => {
  it("changes when an entry, a link's target, or a configured path or its ancestor changes; not otherwise", () => {
    const p = project();
    file(join(p, "src", "a.ts"), "one");
    const outside = join(p, "..", `${p.split("/").pop() as string}-out`);
    dirs.push(outside);
    const key = (): string | undefined => diskKey(scanProject(join(p, "src")), [join(outside, "deny"), join(outside, "keys", "*.pub")]);
    const k0 = key();
    expect(key()).toBe(k0);
    writeFileSync(join(p, "src", "a.ts"), "two: contents do not matter");
    expect(key()).toBe(k0);
    file(join(p, "src", ".env"));
    const k1 = key();
    expect(k1).not.toBe(k0);
    mkdirSync(join(outside, "deny"), { recursive: true });
    const k2 = key();
    expect(k2).not.toBe(k1);
    file(join(outside, "keys", "id.pub"));
    const k3 = key();
    expect(k3).not.toBe(k2);
    symlinkSync("/etc", join(p, "src", "l"));
    const k4 = key();
    rmSync(join(p, "src", "l"));
    symlinkSync("/usr", join(p, "src", "l"));
    expect(key()).not.toBe(k4);
    expect(diskKey(scanProject(p), [join(p, "**", "*.pem")])).toBeUndefined();
  });

  it("reads a wrap's mount points, and refuses a wrap it cannot read", () => {
    const p = project();
    file(join(p, "there"));
    const wrapped = `bwrap --ro-bind / / --ro-bind /dev/null ${join(p, "there")} --ro-bind /dev/null ${join(p, "missing")} --ro-bind /tmp/claude-empty-x ${join(p, ".git")} -- bash -c x`;
    expect(planMounts(wrapped)).toEqual({
      mountPoints: [join(p, "missing"), join(p, ".git")],
      emptyDir: "/tmp/claude-empty-x",
      paths: ["/", "/dev/null", join(p, "there"), join(p, "missing"), join(p, ".git")],
    });
    expect(planMounts(`bwrap --ro-bind /dev/null '${join(p, "a b")}' -- bash`)).toBeUndefined();
    expect(planMounts("bwrap --args 3 -- bash")).toBeUndefined();
  });
});
