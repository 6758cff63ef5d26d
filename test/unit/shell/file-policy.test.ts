// The file tools' verdicts under the sandbox's one filesystem policy (SPEC-sandbox, "Scope"):
// deny-read with its re-allows, the protected paths (by name, by place, by a git folder's shape),
// deny-write, and what is asked for outside the writable set.
import { mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { effectivePolicy, emptyGrants, fileRules, readRefusal, writeVerdict, type Enforcement, type FileRules } from "../../../handwritten/extensions/shell/sandbox/index.js";
import type { SandboxConfig } from "../../../generated/index.js";
import { tempDir } from "./helpers.js";

function setup(config: SandboxConfig = {}, enforcement: Enforcement = "full"): { dir: string; project: string; roots: { config: string; state: string; runtime: string }; rules: () => FileRules } {
  const dir = tempDir();
  const project = join(dir, "project");
  mkdirSync(project);
  const roots = { config: join(dir, "config"), state: join(dir, "state"), runtime: join(dir, "runtime") };
  return { dir, project, roots, rules: () => fileRules(effectivePolicy(config, project, roots, emptyGrants()), project, enforcement) };
}

const verdict = (rules: FileRules, path: string, content = ""): string => {
  const v = writeVerdict(rules, { real: path, requested: path, content });
  return v.kind === "refused" ? `refused: ${v.why}` : v.kind === "ask" ? `ask ${v.grant}` : "ok";
};

/** A bare repository's shape: HEAD, objects/, refs/. */
function bareRepo(at: string): void {
  mkdirSync(join(at, "objects"), { recursive: true });
  mkdirSync(join(at, "refs"));
  writeFileSync(join(at, "HEAD"), "ref: refs/heads/main\n");
}

describe("file-tool reads", () => {
  it("deny-read covers credentials and tau's secrets; the re-allowed ssh files stay readable; off when the user has the sandbox off", () => {
    const s = setup();
    const rules = s.rules();
    const ssh = join(homedir(), ".ssh");
    expect(readRefusal(rules, join(ssh, "id_rsa"))).toContain(`the filesystem policy denies reading ${ssh}`);
    expect(readRefusal(rules, join(ssh, "id_rsa"))).toContain(`:sandbox filesystem allow-read add ${join(ssh, "id_rsa")}`);
    expect(readRefusal(rules, join(homedir(), ".aws", "credentials"))).toBeDefined();
    expect(readRefusal(rules, join(ssh, "known_hosts"))).toBeUndefined();
    expect(readRefusal(rules, join(ssh, "id_ed25519.pub"))).toBeUndefined();
    expect(readRefusal(rules, join(s.roots.config, "secrets", "provider-openai"))).toContain(`denies reading ${join(s.roots.config, "secrets")}`);
    expect(readRefusal(rules, join(s.roots.state, "secrets", "x"))).toBeDefined();
    expect(readRefusal(rules, join(s.roots.config, "harness.yaml"))).toBeUndefined();
    expect(readRefusal(rules, join(s.project, "src", "a.ts"))).toBeUndefined();
    expect(readRefusal(setup({}, "protected").rules(), join(ssh, "id_rsa"))).toBeUndefined();
  });

  it("glob entries cover what they match and everything below it", () => {
    const s = setup({ filesystem: { deny_read: ["/data/**/private"], allow_read: ["/data/*/private/ok-*"] } });
    const rules = s.rules();
    expect(readRefusal(rules, "/data/a/b/private/key")).toBeDefined();
    expect(readRefusal(rules, "/data/a/private")).toBeDefined();
    expect(readRefusal(rules, "/data/a/private/ok-1")).toBeUndefined();
    expect(readRefusal(rules, "/data/a/b/private/ok-1")).toBeDefined();
    expect(readRefusal(rules, "/data/a/public/key")).toBeUndefined();
  });
});

describe("file-tool writes", () => {
  it("[handoff.sandbox.dossier-exception] of the project's protected .tau/ the file tools may write exactly a handoff dossier file directly in it; nothing else there, and not when another protected region covers it", () => {
    const s = setup();
    const rules = s.rules();
    const tau = join(s.project, ".tau");
    expect(verdict(rules, join(tau, "handoff_s-mx9-5a2d5df306d7.md"))).toBe("ok");
    expect(verdict(setup({}, "protected").rules(), join(setup().project, ".tau", "handoff_s-a.md"))).toBe("ok");
    for (const other of ["sandbox.yaml", "handoff_s-a.md.sh", "handoff_x.md", join("handoff", "handoff_s-a.md"), join("handoff", "call.md")]) {
      expect(verdict(rules, join(tau, other))).toMatch(/^refused: .* is protected/);
    }
    // A project inside tau's configuration root: that root's protection still holds for the dossier.
    const inside = join(s.roots.config, "project");
    mkdirSync(inside, { recursive: true });
    const nested = fileRules(effectivePolicy({}, inside, s.roots, emptyGrants()), inside, "full");
    expect(verdict(nested, join(inside, ".tau", "handoff_s-a.md"))).toMatch(/^refused: .* is protected/);
  });

  it("what runs code on the host is protected by name anywhere and by place in the home folder", () => {
    const s = setup();
    const rules = s.rules();
    const home = homedir();
    for (const path of [
      join(home, ".gitconfig"),
      join(home, ".config", "git", "config"),
      join(home, ".config", "fish", "config.fish"),
      join(home, ".zshenv"),
      join(home, ".bash_login"),
      join(home, ".ssh", "authorized_keys"),
      join(home, ".ssh", "rc"),
      join(home, ".ssh", "config"),
      join(s.project, ".zlogin"),
      join(s.project, "sub", ".bash_logout"),
      join(s.project, ".vscode", "tasks.json"),
      join(s.project, "pkg", ".vscode", "settings.json"),
      join(s.project, ".idea", "workspace.xml"),
      join(s.project, ".tau", "sandbox.yaml"),
      join(s.roots.config, "sandbox.yaml"),
      join(s.roots.state, "x"),
    ]) {
      expect(verdict(rules, path), path).toMatch(/^refused: .* is protected \(/);
    }
    expect(verdict(rules, join(s.project, "src", "profile.ts"))).toBe("ok");
    expect(verdict(rules, join(s.project, "vscode-notes.md"))).toBe("ok");
  });

  it("every git folder's config, hooks and info are protected: .git folders, bare repositories, worktree and submodule git folders", () => {
    const s = setup();
    const rules = s.rules();
    bareRepo(join(s.project, "mirror.git"));
    mkdirSync(join(s.project, "wt-git"));
    writeFileSync(join(s.project, "wt-git", "HEAD"), "ref: refs/heads/x\n");
    writeFileSync(join(s.project, "wt-git", "commondir"), "../mirror.git\n");
    for (const path of [
      join(s.project, "mirror.git", "hooks", "pre-push"),
      join(s.project, "mirror.git", "config"),
      join(s.project, "mirror.git", "info", "attributes"),
      join(s.project, "wt-git", "config.worktree"),
      join(s.project, "wt-git", "hooks", "post-checkout"),
      join(s.project, "nested", ".git", "config"),
      join(s.project, ".git", "modules", "lib", "hooks", "pre-commit"),
      join(s.dir, "elsewhere", ".git", "hooks", "pre-commit"),
    ]) {
      expect(verdict(rules, path), path).toMatch(/^refused: .* is protected \(a git folder's hooks and config run code/);
    }
    expect(verdict(rules, join(s.project, "mirror.git", "description"))).toBe("ok");
    // Not a git folder: its config is anybody's.
    expect(verdict(rules, join(s.project, "app", "config"))).toBe("ok");
    expect(verdict(rules, join(s.project, "app", "hooks", "use-thing.ts"))).toBe("ok");
  });

  it("a write that would make a folder holding a config or hooks into a git folder is refused; an empty one may become one", () => {
    const s = setup();
    const rules = s.rules();
    const planted = join(s.project, "planted");
    mkdirSync(join(planted, "hooks"), { recursive: true });
    writeFileSync(join(planted, "hooks", "post-checkout"), "#!/bin/sh\necho owned\n");
    writeFileSync(join(planted, "HEAD"), "ref: refs/heads/main\n");
    mkdirSync(join(planted, "objects"));
    expect(verdict(rules, join(planted, "refs", "heads", "main"))).toMatch(/would make a folder holding a config or hooks into a git folder/);
    const clean = join(s.project, "clean");
    mkdirSync(join(clean, "objects"), { recursive: true });
    writeFileSync(join(clean, "HEAD"), "ref: refs/heads/main\n");
    expect(verdict(rules, join(clean, "refs", "heads", "main"))).toBe("ok");
  });

  it("a .git file must name a git folder in the project", () => {
    const s = setup();
    const rules = s.rules();
    bareRepo(join(s.project, "store.git"));
    mkdirSync(join(s.project, "unprotected", "hooks"), { recursive: true });
    const pointer = join(s.project, "sub", ".git");
    expect(verdict(rules, pointer, "gitdir: ../store.git\n")).toBe("ok");
    expect(verdict(rules, pointer, "gitdir: ../unprotected\n")).toMatch(/a \.git file makes git read config and hooks from the folder it names/);
    bareRepo(join(s.dir, "outside.git"));
    expect(verdict(rules, pointer, `gitdir: ${join(s.dir, "outside.git")}\n`)).toMatch(/must be a git folder in the project/);
    expect(verdict(rules, pointer, "nonsense\n")).toMatch(/must be a git folder in the project/);
  });

  it("outside the writable set a write is asked for its nearest existing folder; / itself is never offered; deny-write refuses", () => {
    const s = setup();
    mkdirSync(join(s.dir, "outside"));
    const rules = fileRules(effectivePolicy({ filesystem: { deny_write: [join(s.project, "generated")] } }, s.project, s.roots, emptyGrants()), s.project, "full");
    expect(verdict(rules, join(s.dir, "outside", "new", "f.txt"))).toBe(`ask ${join(s.dir, "outside")}`);
    expect(verdict(rules, "/tau-no-such-top-level-folder/f.txt")).toMatch(/would need write access to the whole filesystem \(\/\)/);
    expect(verdict(rules, join(s.project, "generated", "x.ts"))).toMatch(/deny-write rule .*generated of sandbox.yaml/);
    expect(verdict(rules, join(s.project, "src", "x.ts"))).toBe("ok");
    // The default deny-write: credential files to three levels into the project.
    const defaults = s.rules();
    expect(verdict(defaults, join(s.project, ".env"))).toMatch(/is a credential file/);
    expect(verdict(defaults, join(s.project, "a", "b", "server.key"))).toMatch(/is a credential file/);
    expect(verdict(defaults, join(s.project, "a", "b", "c", "server.key"))).toBe("ok");
  });

  it("with the sandbox off only the protected paths stay refused", () => {
    const s = setup({}, "protected");
    const rules = s.rules();
    mkdirSync(join(s.dir, "outside"));
    expect(verdict(rules, join(s.dir, "outside", "f.txt"))).toBe("ok");
    expect(verdict(rules, join(s.project, ".env"))).toBe("ok");
    expect(verdict(rules, join(homedir(), ".gitconfig"))).toMatch(/is protected/);
    expect(verdict(rules, join(s.project, ".tau", "sandbox.yaml"))).toMatch(/is protected/);
  });
});
