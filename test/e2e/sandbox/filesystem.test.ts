// The sandbox's filesystem isolation through a real daemon, real extensions and real bubblewrap
// (SPEC-sandbox, GATE-sandbox): writes outside the project, deny-read paths, protected paths that
// do not exist yet, symbolic links out of the workspace, approvals and their replay.
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { SandboxSession } from "./support.js";
import { commandLine, running, useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { waitFor } from "../../support/wait.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

describe("the sandboxed shell tool", () => {
  it("[sandbox.fs.write-outside-offered-and-replayed] a write outside the project fails, is offered for approval, and approval replays the command once", async () => {
    const s = await SandboxSession.active(fake, cleanups);
    const outside = s.outsideDir();
    const target = join(outside, "made.txt");
    const counter = join(s.w.project, "attempts");

    // Inside the project a write just works, and asks nothing.
    const inside = await s.shell("echo fine > inside.txt && cat inside.txt");
    expect(inside.output).toBe("fine\n[exit code 0]");

    const callId = await s.callShell(`echo x >> ${counter}; echo hello > ${target}`);
    const ask = await s.approval();
    expect(ask).toMatchObject({ kind: "filesystem_write", target: outside, choices: ["allow_retry", "allow_adapt", "deny"], call_id: callId, agent_id: s.agentId });
    expect(existsSync(target)).toBe(false);
    s.answer(ask.approval_id, "allow_retry");
    expect(await s.next("sandbox.approval_resolved", (d) => d.approval_id === ask.approval_id)).toMatchObject({ outcome: "allowed" });
    const r = await s.result(callId);
    expect(r.outcome).toBe("ok");
    expect(r.output).toContain("[first attempt]");
    expect(r.output).toContain("Read-only file system");
    expect(r.output).toContain(`the user approved write access to ${outside} for one run; the whole command was run again`);
    expect(r.output.endsWith("[exit code 0]")).toBe(true);
    expect(readFileSync(target, "utf8")).toBe("hello\n");
    // Replayed exactly once: the first attempt and the replay.
    expect(readFileSync(counter, "utf8")).toBe("x\nx\n");

    // The grant was for that one run: the next write outside is refused again and asks again.
    const again = await s.callShell(`echo again > ${join(outside, "again.txt")}`);
    const ask2 = await s.approval();
    s.answer(ask2.approval_id, "deny");
    const denied = await s.result(again);
    expect(denied.output).toContain(`write access to ${join(outside, "again.txt")} was not granted: the user refused it`);
    expect(existsSync(join(outside, "again.txt"))).toBe(false);

    // "Allow but let the model adapt" grants it for the session without running the command again.
    const adapt = await s.callShell(`echo x >> ${counter}; echo adapt > ${join(outside, "adapt.txt")}`);
    s.answer((await s.approval()).approval_id, "allow_adapt");
    const adapted = await s.result(adapt);
    expect(adapted.output).toContain(`the user allowed write access to ${outside} for the rest of this session; the command was not run again`);
    expect(existsSync(join(outside, "adapt.txt"))).toBe(false);
    expect(readFileSync(counter, "utf8")).toBe("x\nx\nx\n");
    expect((await s.shell(`echo adapt > ${join(outside, "adapt.txt")}`)).output).toBe("(no output)\n[exit code 0]");
    expect(readFileSync(join(outside, "adapt.txt"), "utf8")).toBe("adapt\n");

    // Safe diagnostics carry no command, target or output.
    const diagnostics = s.client.deliveries().filter((d) => d.name === "sandbox.diagnostic_recorded");
    expect(diagnostics.length).toBeGreaterThan(0);
    for (const d of diagnostics) expect(Object.keys(d.data).sort()).toEqual(expect.arrayContaining(["at", "kind", "outcome"]));
    expect(JSON.stringify(diagnostics)).not.toContain(outside);
  });

  it("[sandbox.fs.deny-read] a read of a deny-read path fails inside the sandbox", async () => {
    const s = await SandboxSession.active(fake, cleanups, { globalYaml: 'filesystem:\n  deny_read: ["$TAU_HOME/secret"]\n' });
    mkdirSync(join(s.w.home, "secret"));
    writeFileSync(join(s.w.home, "secret", "token"), "TOP-SECRET\n");
    writeFileSync(join(s.w.home, "public"), "PUBLIC\n");
    expect((await s.shell(`cat ${join(s.w.home, "public")}`)).output).toBe("PUBLIC\n[exit code 0]");
    const callId = await s.callShell(`cat ${join(s.w.home, "secret", "token")}`);
    const ask = await s.approval();
    expect(ask).toMatchObject({ kind: "filesystem_read", call_id: callId });
    s.answer(ask.approval_id, "deny");
    const r = await s.result(callId);
    expect(r.output).not.toContain("TOP-SECRET");
    expect(r.output).toContain("[exit code 1]");
    expect(r.output).toContain("was not granted: the user refused it");
    // "Allow but let the model adapt" re-allows that path for the session: the next read works.
    const adapt = await s.callShell(`cat ${join(s.w.home, "secret", "token")}`);
    s.answer((await s.approval()).approval_id, "allow_adapt");
    expect((await s.result(adapt)).output).toContain(`the user allowed read access to ${join(s.w.home, "secret", "token")} for the rest of this session`);
    expect((await s.shell(`cat ${join(s.w.home, "secret", "token")}`)).output).toBe("TOP-SECRET\n[exit code 0]");
  });

  it("[sandbox.fs.default-deny-read-ssh] by default a private key in ~/.ssh cannot be read, while known_hosts and the public key can", async () => {
    // HOME is the test's own temporary home, so the default deny-read applies to its ~/.ssh.
    const s = await SandboxSession.active(fake, cleanups, { env: (w) => ({ HOME: w.home }) });
    const ssh = join(s.w.home, ".ssh");
    mkdirSync(ssh, { mode: 0o700 });
    writeFileSync(join(ssh, "id_ed25519"), "-----BEGIN OPENSSH PRIVATE KEY-----\nPRIVATE-KEY-BYTES\n", { mode: 0o600 });
    writeFileSync(join(ssh, "id_ed25519.pub"), "ssh-ed25519 PUBLIC-KEY-BYTES user@host\n");
    writeFileSync(join(ssh, "known_hosts"), "github.com ssh-ed25519 KNOWN-HOST-KEY\n");
    expect((await s.command("show")).text).toContain(`read denied (default):\n  ${ssh}\n`);

    const callId = await s.callShell(`cat ${join(ssh, "id_ed25519")}`);
    const ask = await s.approval();
    expect(ask).toMatchObject({ kind: "filesystem_read", target: join(ssh, "id_ed25519"), call_id: callId });
    s.answer(ask.approval_id, "deny");
    const r = await s.result(callId);
    expect(r.output).not.toContain("PRIVATE-KEY-BYTES");
    expect(r.output).toContain("[exit code 1]");
    expect((await s.shell(`cat ${join(ssh, "known_hosts")}`)).output).toBe("github.com ssh-ed25519 KNOWN-HOST-KEY\n[exit code 0]");
    expect((await s.shell(`cat ${join(ssh, "id_ed25519.pub")}`)).output).toBe("ssh-ed25519 PUBLIC-KEY-BYTES user@host\n[exit code 0]");
  });

  it("[sandbox.fs.replay-within-remaining-time] a replay after allow_retry runs only within the time the first attempt left, and its result says so", async () => {
    const s = await SandboxSession.active(fake, cleanups);
    const outside = s.outsideDir();
    const counter = join(s.w.project, "attempts");
    // Of a 6 s timeout the first attempt spends 4 s before its write outside fails; the replay is
    // left at most 2 s, too few for its 4 s sleep: it is cut before it counts or writes anything.
    const callId = await s.callShell(`echo start >> ${counter}; sleep 4; echo done >> ${counter}; echo hello > ${join(outside, "f")}`, 6);
    const ask = await s.approval();
    expect(ask).toMatchObject({ kind: "filesystem_write", target: outside, call_id: callId });
    s.answer(ask.approval_id, "allow_retry");
    const r = await s.result(callId);
    expect(r.output).toContain("[first attempt]");
    expect(r.output).toContain("Read-only file system");
    expect(r.output).toMatch(/the whole command was run again within the ([01](\.\d)?|2) s its first attempt left of the 6 s timeout/);
    expect(r.output).toMatch(/\[timed out after ([01](\.\d)?|2) s \(what the first attempt left of the 6 s timeout\); the command's process group was killed\]$/);
    // The replay started (it counted its start) and was cut in its sleep.
    expect(readFileSync(counter, "utf8")).toBe("start\ndone\nstart\n");
    expect(existsSync(join(outside, "f"))).toBe(false);
  });

  it("[sandbox.fs.protected-missing] a protected path that does not exist yet is no mount point: what a command makes of it is moved out after it, never offered", async () => {
    const s = await SandboxSession.active(fake, cleanups);
    const p = s.w.project;
    expect(existsSync(join(p, ".tau"))).toBe(false);
    const r = await s.shell("mkdir -p .tau; echo 'enabled: false' > .tau/sandbox.yaml; ls -A");
    // Nothing stood in for it while the command ran: the command saw an empty project.
    expect(r.output).toContain(".tau\n[exit code 0]");
    expect(r.output).toContain(`moved ${join(p, ".tau")} out of the project`);
    expect(existsSync(join(p, ".tau"))).toBe(false);
    // git init in the project works; its hooks are samples and its config runs nothing: both kept.
    const init = await s.shell("git init -q . && echo inited");
    expect(init.output).toBe("inited\n[exit code 0]");
    expect(existsSync(join(p, ".git", "config"))).toBe(true);
    // From then on its hooks and config exist, and are read-only: refused as the protection, never offered.
    const hook = await s.shell("echo evil > .git/hooks/pre-commit");
    expect(hook.output).toContain(`${join(p, ".git", "hooks", "pre-commit")} is protected`);
    expect(existsSync(join(p, ".git", "hooks", "pre-commit"))).toBe(false);
    // A git folder without hooks: a hook a command makes is moved out after it.
    rmSync(join(p, ".git", "hooks"), { recursive: true });
    const made = await s.shell("mkdir .git/hooks && printf '#!/bin/sh\\necho evil\\n' > .git/hooks/pre-commit && echo made");
    expect(made.output).toContain("made\n[exit code 0]");
    expect(made.output).toContain(`moved ${join(p, ".git", "hooks", "pre-commit")} out of the project`);
    expect(existsSync(join(p, ".git", "hooks", "pre-commit"))).toBe(false);
    // Outside the writable set a missing start-up file stays uncreatable.
    const rc = await s.shell("echo evil >> ~/.bashrc");
    expect(rc.output).not.toContain("[exit code 0]");
    // Nothing was asked about any of them.
    expect(s.client.deliveries().some((d) => d.name === "sandbox.approval_requested")).toBe(false);
  });

  it("[sandbox.fs.symlink-no-widening] a symbolic link in the workspace pointing outside does not widen write access", async () => {
    const s = await SandboxSession.active(fake, cleanups);
    const outside = join(s.w.home, "elsewhere");
    mkdirSync(outside);
    symlinkSync(outside, join(s.w.project, "link"));
    const callId = await s.callShell("echo through > link/f.txt");
    const ask = await s.approval();
    // What is asked for is where the write lands, not the link's name.
    expect(ask).toMatchObject({ kind: "filesystem_write", target: outside });
    s.answer(ask.approval_id, "deny");
    const r = await s.result(callId);
    expect(r.output).toContain("Read-only file system");
    expect(existsSync(join(outside, "f.txt"))).toBe(false);
  });

  it("[sandbox.fs.root-never-offered] a new top-level folder would need / writable: it is refused with the reason, never offered", async () => {
    const s = await SandboxSession.active(fake, cleanups);
    const top = `/tau-top-${process.pid}-1u`;
    cleanups.push(() => rmSync(top, { recursive: true, force: true }));
    const r = await s.shell(`mkdir ${top}`);
    expect(r.output).toContain("Read-only file system");
    expect(r.output).toContain(`${top} would need write access to the whole filesystem (/), which no approval grants`);
    expect(existsSync(top)).toBe(false);
    expect(s.client.deliveries().some((d) => d.name === "sandbox.approval_requested")).toBe(false);
  });

  it("[sandbox.fs.file-tools-protected] the model's write and edit tools cannot change protected paths, through a link either", async () => {
    const s = await SandboxSession.active(fake, cleanups);
    mkdirSync(join(s.w.project, ".git", "hooks"), { recursive: true });
    writeFileSync(join(s.w.project, ".git", "config"), "[core]\n");
    symlinkSync(join(s.w.project, ".git", "hooks"), join(s.w.project, "hooks-link"));
    const refusals: Array<[string, Record<string, unknown>, string]> = [
      ["write", { path: ".tau/sandbox.yaml", content: "enabled: false\n" }, join(s.w.project, ".tau", "sandbox.yaml")],
      ["write", { path: join(s.w.home, "config", "trusted-projects"), content: `${s.w.project}\n` }, join(s.w.home, "config", "trusted-projects")],
      ["edit", { path: ".git/config", edits: [{ old_text: "[core]", new_text: "[core]\n\thooksPath = /tmp" }] }, join(s.w.project, ".git", "config")],
      ["write", { path: "hooks-link/pre-commit", content: "#!/bin/sh\necho evil\n" }, join(s.w.project, "hooks-link", "pre-commit")],
    ];
    for (const [tool, args, absolute] of refusals) {
      const r = await s.tool(tool, args);
      expect(r.outcome, `${tool} ${String(args.path)}`).toBe("error");
      expect(r.output).toContain(`${absolute} is protected`);
    }
    expect(existsSync(join(s.w.project, ".tau", "sandbox.yaml"))).toBe(false);
    expect(existsSync(join(s.w.home, "config", "trusted-projects"))).toBe(false);
    expect(readFileSync(join(s.w.project, ".git", "config"), "utf8")).toBe("[core]\n");
    expect(existsSync(join(s.w.project, ".git", "hooks", "pre-commit"))).toBe(false);
    // Elsewhere in the project they work as ever.
    expect(await s.tool("write", { path: "notes.md", content: "fine\n" })).toMatchObject({ outcome: "ok" });
    expect(readFileSync(join(s.w.project, "notes.md"), "utf8")).toBe("fine\n");
  });

  it("[sandbox.run.dies-with-daemon] a sandboxed command still running when the daemon is killed is ended with it", async () => {
    const s = await SandboxSession.active(fake, cleanups);
    const marker = `tau-sandboxed-sleep-${process.pid}`;
    // The command, inside bubblewrap, among the daemon's descendants.
    const tree = await s.sleeping(marker);
    expect(tree.some((pid) => commandLine(pid).startsWith("bwrap"))).toBe(true);
    process.kill(s.daemon.pid, "SIGKILL");
    await waitFor(() => tree.every((pid) => !running(pid)), "every process of the session to end", { pollMs: 50, timeoutMs: 20_000 });
  });

  it("[sandbox.fs.user-commands-not-wrapped] `!cmd` user commands keep the user's rights", async () => {
    const s = await SandboxSession.active(fake, cleanups);
    const target = join(s.w.home, "by-user.txt");
    s.client.emit("shell.command_request", { agent_id: s.agentId, request_id: "user-1", command: `echo mine > ${target}`, include_in_context: false });
    expect(await s.next("shell.command_finished", (d) => d.request_id === "user-1")).toMatchObject({ exit_code: 0 });
    expect(readFileSync(target, "utf8")).toBe("mine\n");
  });
});
