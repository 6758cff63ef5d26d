// The project walks around a sandboxed command and the reused wrap's key (SPEC-sandbox, "Created
// during a command", "Reusing the wrap"), on real files.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createdDuring, gitConfigKeys, isGitControlPath, scanProject, scannedDenyWrite, unboundProtected } from "../../../handwritten/extensions/shell/sandbox/project-scan.js";
import { effectivePolicy, emptyGrants, runtimeConfig, watchedPaths } from "../../../handwritten/extensions/shell/sandbox/policy.js";
import { RunningRecord, recordsDir, recoverAfterCrash } from "../../../handwritten/extensions/shell/sandbox/running-record.js";
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

describe("protected paths in the project, without mount points", () => {
  const roots = (p: string) => ({ config: join(p, "..", "cfg"), state: join(p, "..", "state"), runtime: join(p, "..", "run") });

  it("binds the protected names that exist (to three levels) and the hooks and config that exist; watches the missing ones instead", () => {
    const p = project();
    file(join(p, ".git", "HEAD"));
    file(join(p, ".git", "config"), "[core]\n");
    file(join(p, ".gitmodules"));
    file(join(p, "a", "b", ".vscode", "tasks.json"));
    file(join(p, "a", "b", "c", "d", ".bashrc")); // deeper than three levels: not looked for
    file(join(p, "sub", ".git"), "gitdir: ../.git/modules/sub\n");
    const s = scanProject(p);
    expect([...s.protectedFound].sort()).toEqual([join(p, ".gitmodules"), join(p, "a", "b", ".vscode")]);
    expect([...s.missingControl]).toEqual([join(p, ".git", "hooks")]);
    const bound = scannedDenyWrite(s, false);
    expect(bound).toContain(join(p, ".git", "config"));
    expect(bound).not.toContain(join(p, ".git", "hooks"));
    const policy = effectivePolicy({}, p, roots(p), emptyGrants());
    const watched = unboundProtected(s, p, watchedPaths(policy));
    expect(watched).toContainEqual({ path: join(p, ".git", "hooks"), rule: "hooks" });
    for (const name of [".tau", ".bashrc", ".idea", ".claude/commands", ".mcp.json"]) expect(watched).toContainEqual({ path: join(p, name), rule: "whole" });
    expect(watched.some((w) => w.path === join(p, ".gitmodules") || w.path === join(p, ".git", "config"))).toBe(false);
    // Nothing missing inside the project reaches the runtime: it would make a mount point there.
    const denyWrite = runtimeConfig(policy, p, {}, s).filesystem.denyWrite.map((e) => (typeof e === "string" ? e : e.path));
    const inProject = denyWrite.filter((d) => d.startsWith(`${p}/`));
    expect(inProject.length).toBeGreaterThan(0);
    expect(inProject.filter((d) => !existsSync(d))).toEqual([]);
    // Outside the project a missing protected path is still bound (read-only where it is writable at all).
    expect(denyWrite).toContain(join(roots(p).config));
  });

  it("moves out what a command made of the watched paths: a whole protected name, a new hooks folder's hooks, an unsafe config", () => {
    const p = project();
    file(join(p, ".git", "HEAD"));
    const before = scanProject(p);
    const watched = unboundProtected(before, p, [join(p, ".tau")]);
    file(join(p, ".tau", "sandbox.yaml"), "enabled: false\n");
    file(join(p, ".vscode", "tasks.json"));
    file(join(p, ".git", "hooks", "pre-commit"));
    file(join(p, ".git", "hooks", "pre-push.sample"));
    file(join(p, ".git", "config"), "[core]\n\tfsmonitor = evil\n");
    const found = createdDuring(before, scanProject(p), { credentials: true, watched }).map((f) => f.path.slice(p.length + 1)).sort();
    expect(found).toEqual([".git/config", ".git/hooks/pre-commit", ".tau", ".vscode"]);
    // A new top-level .git and its missing hooks are one finding per path.
    const q = project();
    const qBefore = scanProject(q);
    const qWatched = unboundProtected(qBefore, q, [join(q, ".git", "hooks"), join(q, ".git", "config")]);
    file(join(q, ".git", "HEAD"));
    file(join(q, ".git", "hooks", "post-checkout"));
    expect(createdDuring(qBefore, scanProject(q), { credentials: true, watched: qWatched }).map((f) => f.path.slice(q.length + 1))).toEqual([".git/hooks/post-checkout"]);
  });

  it("after a crash, checks the record a killed owner left for this project; a live owner's and another project's are left alone", () => {
    const p = project();
    const state = join(p, "..", `${p.split("/").pop() as string}-state`);
    dirs.push(state);
    const mine = new RunningRecord(recordsDir(state), p);
    mine.update([{ path: join(p, ".tau"), rule: "whole" }], []);
    // A killed owner's record: its pid is no live process's.
    const dead = JSON.stringify({ pid: 999_999_999, start: "1", project: p, watched: [{ path: join(p, ".vscode"), rule: "whole" }, { path: "/etc/passwd", rule: "whole" }], mountPoints: [join(state, "mp")] });
    writeFileSync(join(recordsDir(state), "999999999.json"), dead);
    const other = JSON.stringify({ pid: 999_999_998, start: "1", project: "/elsewhere", watched: [], mountPoints: [] });
    writeFileSync(join(recordsDir(state), "999999998.json"), other);
    file(join(p, ".tau", "sandbox.yaml"));
    file(join(p, ".vscode", "tasks.json"));
    writeFileSync(join(state, "mp"), "");
    const notes = recoverAfterCrash(state, p);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain(`after a command cut short (tau was killed), moved ${join(p, ".vscode")}`);
    expect(existsSync(join(p, ".vscode"))).toBe(false);
    expect(existsSync(join(state, "mp"))).toBe(false);
    // This process's own record (alive) is not touched, nor is the path outside the project.
    expect(existsSync(join(p, ".tau", "sandbox.yaml"))).toBe(true);
    expect(existsSync("/etc/passwd")).toBe(true);
    expect(readdirSync(recordsDir(state)).sort()).toEqual([`${process.pid}.json`, "999999998.json"]);
    mine.clear();
    expect(readdirSync(recordsDir(state))).toEqual(["999999998.json"]);
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
