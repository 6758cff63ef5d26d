// What bubblewrap cannot bind because it does not exist when a command starts (SPEC-sandbox,
// "Created during a command"), and git folders below the project root: through a real daemon, real
// extensions and real bubblewrap.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { SandboxSession } from "./support.js";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", ["-c", "init.defaultBranch=main", ...args], { cwd, stdio: "ignore" });
}

/** Every file below `dir`, relative to it ([] when there is no such folder). */
function filesBelow(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import("node:fs").Dirent[])
    .filter((e) => !e.isDirectory())
    .map((e) => relative(dir, join(e.parentPath ?? (e as unknown as { path: string }).path, e.name)))
    .sort();
}

describe("what a sandboxed command creates", () => {
  it("[sandbox.fs.nested-git-protected] nested repositories' hooks and config, deep ones and submodules' git folders too, are read-only to commands and file tools", async () => {
    const s = await SandboxSession.start(fake, cleanups);
    const p = s.w.project;
    git(p, "init", "-q", ".");
    git(p, "init", "-q", "sub");
    mkdirSync(join(p, "a", "b", "c", "d"), { recursive: true });
    git(join(p, "a", "b", "c", "d"), "init", "-q", "deep");
    // A submodule's git folder lives in the top-level one's modules/.
    git(p, "init", "-q", "--bare", ".git/modules/m");
    expect(await s.settled()).toMatchObject({ state: "active" });
    const targets = ["sub/.git/hooks/pre-commit", "sub/.git/config", "a/b/c/d/deep/.git/hooks/post-checkout", "a/b/c/d/deep/.git/config", ".git/modules/m/hooks/post-checkout", ".git/modules/m/config"];
    const before = new Map(targets.map((t) => [t, existsSync(join(p, t)) ? readFileSync(join(p, t), "utf8") : undefined]));
    for (const t of targets) {
      const r = await s.shell(`echo '[core] fsmonitor = evil' >> ${t}`);
      expect(r.output, t).not.toContain("[exit code 0]");
      expect(existsSync(join(p, t)) ? readFileSync(join(p, t), "utf8") : undefined, t).toBe(before.get(t));
    }
    // Refused as protected, never offered for approval.
    expect(s.client.deliveries().some((d) => d.name === "sandbox.approval_requested")).toBe(false);
    const w = await s.tool("write", { path: "sub/.git/hooks/pre-commit", content: "#!/bin/sh\necho evil\n" });
    expect(w.outcome).toBe("error");
    expect(w.output).toContain("is protected");
    expect(existsSync(join(p, "sub", ".git", "hooks", "pre-commit"))).toBe(false);
    // The rest of a nested repository works as ever: a commit in it from inside the sandbox.
    const commit = await s.shell("cd sub && echo hi > f && git add f && git -c user.name=t -c user.email=t@t commit -qm one && git log --oneline | wc -l");
    expect(commit.output).toBe("1\n[exit code 0]");
  });

  it("[sandbox.fs.created-git-checked] hooks and unsafe config of a git folder the command created, and a commondir it wrote, are moved out after it", async () => {
    const s = await SandboxSession.start(fake, cleanups);
    const p = s.w.project;
    git(p, "init", "-q", ".");
    expect(await s.settled()).toMatchObject({ state: "active" });
    const quarantine = join(s.w.home, "state", "sandbox-quarantine");
    const r = await s.shell(
      [
        "git init -q made",
        "printf '#!/bin/sh\\necho evil\\n' > made/.git/hooks/post-checkout",
        "git -C made config core.fsmonitor 'echo evil'",
        "git init -q plain",
        "mkdir -p $TMPDIR/elsewhere && git init -q --bare $TMPDIR/elsewhere/g",
        "echo $TMPDIR/elsewhere/g > .git/commondir",
        "mkdir pointer && echo gitdir: $TMPDIR/elsewhere/g > pointer/.git",
      ].join(" && "),
    );
    expect(r.output).toContain("[exit code 0]");
    for (const moved of ["made/.git/hooks/post-checkout", "made/.git/config", ".git/commondir", "pointer/.git"]) {
      expect(existsSync(join(p, moved)), moved).toBe(false);
      expect(r.output).toContain(`moved ${join(p, moved)} out of the project`);
    }
    const kept = filesBelow(quarantine);
    expect(kept.map((k) => k.split("/").slice(1).join("/")).sort()).toEqual([".git/commondir", "made/.git/config", "made/.git/hooks/post-checkout", "pointer/.git"]);
    // A plain `git init` is left alone: its config holds nothing that runs a command.
    expect(existsSync(join(p, "plain", ".git", "config"))).toBe(true);
    expect(r.output).not.toContain(join(p, "plain"));
    // git on the host reads no configuration the command wrote.
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: join(p, "made"), encoding: "utf8" })).toBe("");
  });

  it("[sandbox.fs.created-credentials-moved] a .env or *.pem the command creates is moved out after it; one that exists, or appears before a later command, is read-only", async () => {
    const s = await SandboxSession.start(fake, cleanups);
    const p = s.w.project;
    writeFileSync(join(p, ".env"), "KEY=old\n");
    expect(await s.settled()).toMatchObject({ state: "active" });
    const existing = await s.shell("echo KEY=new > .env");
    expect(existing.output).toContain("Read-only file system");
    expect(readFileSync(join(p, ".env"), "utf8")).toBe("KEY=old\n");

    const made = await s.shell("echo KEY=made > .env.local && mkdir -p certs && echo pem > certs/server.pem && cat .env.local");
    expect(made.output).toContain("KEY=made\n[exit code 0]");
    expect(made.output).toContain(`moved ${join(p, ".env.local")} out of the project`);
    expect(made.output).toContain("the deny-write rule for .env*, *.pem and *.key covers files a command creates too");
    expect(existsSync(join(p, ".env.local"))).toBe(false);
    expect(existsSync(join(p, "certs", "server.pem"))).toBe(false);
    const kept = filesBelow(join(s.w.home, "state", "sandbox-quarantine"));
    expect(kept.map((k) => k.split("/").slice(1).join("/")).sort()).toEqual([".env.local", "certs/server.pem"]);
    expect(readFileSync(join(s.w.home, "state", "sandbox-quarantine", kept[0] as string), "utf8")).toBe("KEY=made\n");

    // One the user writes between commands is read-only to the next.
    writeFileSync(join(p, ".env.prod"), "KEY=user\n");
    chmodSync(join(p, ".env.prod"), 0o644);
    const later = await s.shell("echo KEY=model > .env.prod");
    expect(later.output).toContain("Read-only file system");
    expect(readFileSync(join(p, ".env.prod"), "utf8")).toBe("KEY=user\n");
    // Other files are not touched.
    expect((await s.shell("echo ok > notes.txt && cat notes.txt")).output).toBe("ok\n[exit code 0]");
    expect(existsSync(join(p, "notes.txt"))).toBe(true);
  });
});

describe("the reused wrap", () => {
  it("[sandbox.run.wrap-reused-until-disk-changes] one wrap serves commands while nothing it depends on changes, and is rebuilt when a protected path appears", async () => {
    // The deny-read names a folder that does not exist yet.
    const s = await SandboxSession.start(fake, cleanups, { globalYaml: 'filesystem:\n  deny_read: ["$TAU_HOME/secret-later"]\n' });
    const secret = join(s.w.home, "secret-later");
    const p = s.w.project;
    expect(await s.settled()).toMatchObject({ state: "active" });
    // Built once, ahead of the first command (its key also answers for the paths the runtime adds); then reused.
    for (let i = 0; i < 4; i++) expect((await s.shell("echo hi")).output).toBe("hi\n[exit code 0]");
    expect((await s.command("doctor")).text).toMatch(/sandbox wraps: 1 built, 4 reused/);
    // The command reaches the sandbox whole, and is gone from its environment.
    expect((await s.shell(`printf '%s|' "a b" 'c'"'"'d'; env | grep -c ${"TAU_SANDBOX_COMMAND"}`)).output).toBe("a b|c'd|0\n[exit code 1]");

    // What appears on the host between commands is protected in the next one.
    mkdirSync(secret);
    writeFileSync(join(secret, "token"), "s3cret\n");
    const read = await s.callShell(`cat ${join(secret, "token")}`);
    s.answer((await s.approval()).approval_id, "deny");
    expect((await s.result(read)).output).not.toContain("s3cret");
    git(p, "init", "-q", "later");
    const hook = await s.shell("echo evil > later/.git/hooks/pre-commit");
    expect(hook.output).not.toContain("[exit code 0]");
    expect(existsSync(join(p, "later", ".git", "hooks", "pre-commit"))).toBe(false);
    writeFileSync(join(p, ".env"), "KEY=user\n");
    expect((await s.shell("echo KEY=model > .env")).output).toContain("Read-only file system");
    expect(readFileSync(join(p, ".env"), "utf8")).toBe("KEY=user\n");
    const doctor = (await s.command("doctor")).text;
    const built = Number(/sandbox wraps: (\d+) built/.exec(doctor)?.[1]);
    expect(built).toBeGreaterThanOrEqual(4);
    // No mount point of a protected path is left in the project between commands.
    expect(readdirSync(p).sort()).toEqual([".env", "later"]);
  });
});
