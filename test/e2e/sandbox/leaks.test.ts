// Nothing of a session outlives it and nothing appears in the project because of the sandbox
// (SPEC-sandbox, "Nothing outlives the session" and "Created during a command"): through a real
// daemon, real extensions and real bubblewrap, the daemon and the shell extension are killed with
// SIGKILL while a sandboxed command runs.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { SandboxSession } from "./support.js";
import { commandLine, processTree, running, useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { waitFor } from "../../support/wait.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

/** The requirement: within 5 s of the SIGKILL nothing of the session is left. */
const GONE_WITHIN_MS = 5_000;

/** The shell extension among a daemon's descendants. */
function shellExtension(daemonPid: number): number {
  const pid = processTree(daemonPid).find((p) => / ext shell\b/.test(commandLine(p)));
  if (pid === undefined) throw new Error("no shell extension under the daemon");
  return pid;
}

/** The socket files the sandbox of extension `ext` made: the runtime's bridges' and its proxy's, and the one its shared network namespace's relays reach. */
function socketsOf(ext: number, home: string): string[] {
  const bridges = processTree(ext).flatMap((p) => [...commandLine(p).matchAll(/UNIX-LISTEN:([^,\s]+)/g)].map((m) => m[1] as string));
  const proxy = readdirSync(tmpdir())
    .filter((n) => n.startsWith(`srt-mux-${ext}-`))
    .map((n) => join(tmpdir(), n));
  const relays = join(home, "runtime", "sandbox", `${ext}.sock`);
  return [...new Set([...bridges, ...proxy, ...(existsSync(relays) ? [relays] : [])])];
}

function gitStatus(project: string): string {
  return execFileSync("git", ["status", "--porcelain", "--ignored", "--untracked-files=all"], { cwd: project, encoding: "utf8" });
}

/** A project that is a git repository with one commit, and no protected name (`.bashrc`, `.vscode`, `.tau` …) in it. */
function gitProject(project: string): void {
  writeFileSync(join(project, "README.md"), "a project\n");
  execFileSync("git", ["-c", "init.defaultBranch=main", "init", "-q", "."], { cwd: project });
  execFileSync("git", ["add", "README.md"], { cwd: project });
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"], { cwd: project });
}

/** Starts a sandboxed `sleep` and returns once it runs: the session's processes and sockets then. */
async function sleepingCommand(s: SandboxSession, ext: number): Promise<{ processes: number[]; sockets: string[] }> {
  const marker = `tau-leak-sleep-${process.pid}`;
  await s.sleeping(marker);
  const below = processTree(ext);
  // What the test is about is there: bubblewrap, the runtime's bridges, the command, the reaper.
  expect(below.some((p) => commandLine(p).startsWith("bwrap"))).toBe(true);
  expect(below.some((p) => commandLine(p).startsWith("socat"))).toBe(true);
  expect(below.some((p) => commandLine(p).startsWith("tau-shell-reaper"))).toBe(true);
  const sockets = socketsOf(ext, s.w.home);
  expect(sockets.length).toBeGreaterThan(2);
  expect(sockets.every((f) => existsSync(f))).toBe(true);
  return { processes: below, sockets };
}

describe("nothing of a session outlives it", () => {
  it("[sandbox.leak.sigkill-daemon] SIGKILL of the daemon mid-command: within 5 s no process and no socket of the session is left, and git status never changed", async () => {
    const s = await SandboxSession.start(fake, cleanups);
    gitProject(s.w.project);
    expect(await s.settled()).toMatchObject({ state: "active" });
    const before = gitStatus(s.w.project);
    const ext = shellExtension(s.daemon.pid);
    const { processes, sockets } = await sleepingCommand(s, ext);
    expect(gitStatus(s.w.project)).toBe(before);
    const all = [...new Set([...processTree(s.daemon.pid), ...processes])];
    process.kill(s.daemon.pid, "SIGKILL");
    await waitFor(() => all.every((p) => !running(p)) && sockets.every((f) => !existsSync(f)), "every process and socket of the session to be gone", {
      timeoutMs: GONE_WITHIN_MS,
      pollMs: 50,
      detail: () => `left: ${all.filter(running).map((p) => `${p} ${commandLine(p)}`).join("; ")} ${sockets.filter((f) => existsSync(f)).join(" ")}`,
    });
    expect(gitStatus(s.w.project)).toBe(before);
    // The next start: the session resumed in a new daemon, sandboxed again, the project as it was.
    const resumed = await s.resume(cleanups);
    expect(await resumed.settled()).toMatchObject({ state: "active" });
    // The killed call's second round was never asked for: its scripted answer goes to a prompt of its own.
    resumed.client.emit("ui.prompt_submit", { agent_id: resumed.agentId, mode: "queue", text: "go on" });
    await resumed.next("agent.outer_turn_finished");
    expect((await resumed.shell("echo again")).output).toBe("again\n[exit code 0]");
    expect(gitStatus(s.w.project)).toBe(before);
  });

  it("[sandbox.leak.sigkill-extension] SIGKILL of the shell extension mid-command: within 5 s none of its processes and sockets is left; the next one works", async () => {
    const s = await SandboxSession.start(fake, cleanups);
    gitProject(s.w.project);
    expect(await s.settled()).toMatchObject({ state: "active" });
    const before = gitStatus(s.w.project);
    const ext = shellExtension(s.daemon.pid);
    const { processes, sockets } = await sleepingCommand(s, ext);
    process.kill(ext, "SIGKILL");
    await waitFor(() => processes.every((p) => !running(p)) && sockets.every((f) => !existsSync(f)), "every process and socket of the killed extension to be gone", {
      timeoutMs: GONE_WITHIN_MS,
      pollMs: 50,
      detail: () => `left: ${processes.filter(running).map((p) => `${p} ${commandLine(p)}`).join("; ")} ${sockets.filter((f) => existsSync(f)).join(" ")}`,
    });
    expect(gitStatus(s.w.project)).toBe(before);
    // The harness starts the extension again; its sandbox runs commands as before.
    await s.next("sandbox.state_reported", (d) => d.state === "active", 60_000);
    expect((await s.shell("echo again")).output).toBe("again\n[exit code 0]");
    expect(gitStatus(s.w.project)).toBe(before);
  });
  it("[sandbox.leak.sigkill-every-tau-process] SIGKILL of every tau process at once (daemon, extensions and the reaper) mid-command: within 5 s no process of the session and no bridge's socket is left", async () => {
    const s = await SandboxSession.start(fake, cleanups);
    expect(await s.settled()).toMatchObject({ state: "active" });
    const ext = shellExtension(s.daemon.pid);
    const { processes, sockets } = await sleepingCommand(s, ext);
    // With the reaper killed too, the bridges' own sockets go only because each bridge removes its own.
    const bridges = sockets.filter((f) => f.includes("claude-http-"));
    expect(bridges.length).toBeGreaterThan(0);
    const all = [...new Set([...processTree(s.daemon.pid), ...processes])];
    // What a user's `kill -9` of tau reaches: the daemon, the extensions and the reaper (all tau's
    // own programs), not bubblewrap, its relays or the command.
    const tau = all.filter((p) => p === s.daemon.pid || / ext [a-z_-]+\b/.test(commandLine(p)) || commandLine(p).startsWith("tau-shell-reaper"));
    expect(tau).toEqual(expect.arrayContaining([s.daemon.pid, ext]));
    expect(tau.some((p) => commandLine(p).startsWith("tau-shell-reaper"))).toBe(true);
    expect(all.some((p) => !tau.includes(p) && commandLine(p).startsWith("bwrap"))).toBe(true);
    for (const p of tau) process.kill(p, "SIGKILL");
    await waitFor(() => all.every((p) => !running(p)) && bridges.every((f) => !existsSync(f)), "every process of the session and every bridge's socket to be gone", {
      timeoutMs: GONE_WITHIN_MS,
      pollMs: 50,
      detail: () => `left: ${all.filter(running).map((p) => `${p} ${commandLine(p)}`).join("; ")} ${bridges.filter((f) => existsSync(f)).join(" ")}`,
    });
  });

  it("[sandbox.leak.kept-wrap-sigkill] a start that took the kept wrap (no runtime): SIGKILL of every tau process mid-command leaves no process of the session within 5 s", async () => {
    const first = await SandboxSession.active(fake, cleanups);
    expect((await first.shell("echo first")).output).toBe("first\n[exit code 0]");
    first.end();
    const s = await SandboxSession.active(fake, cleanups, { workspace: first.w });
    const ext = shellExtension(s.daemon.pid);
    await s.sleeping(`tau-leak-kept-${process.pid}`);
    const all = [...new Set([...processTree(s.daemon.pid), ...processTree(ext)])];
    // The holder and its relays, the command's bubblewrap, no runtime bridge.
    expect(all.some((p) => commandLine(p).startsWith("bwrap"))).toBe(true);
    expect(all.some((p) => /socat .*TCP6-LISTEN:3128/.test(commandLine(p)))).toBe(true);
    expect(all.some((p) => /socat .*UNIX-LISTEN:/.test(commandLine(p)))).toBe(false);
    const tau = all.filter((p) => p === s.daemon.pid || / ext [a-z_-]+\b/.test(commandLine(p)) || commandLine(p).startsWith("tau-shell-reaper"));
    for (const p of tau) process.kill(p, "SIGKILL");
    await waitFor(() => all.every((p) => !running(p)), "every process of the session to be gone", {
      timeoutMs: GONE_WITHIN_MS,
      pollMs: 50,
      detail: () => `left: ${all.filter(running).map((p) => `${p} ${commandLine(p)}`).join("; ")}`,
    });
  });
});

describe("no file appears in the project because of the sandbox", () => {
  it("[sandbox.project.no-mount-points] while a command runs the project holds nothing it did not hold, inside and out; protected names it creates are moved out after it", async () => {
    const s = await SandboxSession.start(fake, cleanups);
    gitProject(s.w.project);
    expect(await s.settled()).toMatchObject({ state: "active" });
    const before = gitStatus(s.w.project);
    const listing = readdirSync(s.w.project).sort();
    // Inside the sandbox the project shows what is on disk, and nothing appears outside meanwhile.
    const callId = await s.callShell("ls -A; sleep 3");
    await waitFor(() => processTree(s.daemon.pid).some((p) => commandLine(p).startsWith("sleep 3")), "the command to sleep");
    expect(gitStatus(s.w.project)).toBe(before);
    expect(readdirSync(s.w.project).sort()).toEqual(listing);
    const r = await s.result(callId);
    expect(r.output).toBe(`${listing.join("\n")}\n[exit code 0]`);
    expect(gitStatus(s.w.project)).toBe(before);
    // What a command creates of the protected names is moved out after it (none was bound beforehand).
    const made = await s.shell("mkdir .vscode && echo '{}' > .vscode/tasks.json && echo x > .gitmodules && echo x > .bashrc && mkdir .tau && echo 'enabled: false' > .tau/sandbox.yaml && echo made");
    expect(made.output).toContain("made\n[exit code 0]");
    for (const name of [".vscode", ".gitmodules", ".bashrc", ".tau"]) {
      expect(made.output).toContain(`moved ${join(s.w.project, name)} out of the project`);
      expect(existsSync(join(s.w.project, name)), name).toBe(false);
    }
    expect(gitStatus(s.w.project)).toBe(before);
    // One that exists is read-only to the next command, as ever.
    writeFileSync(join(s.w.project, ".gitmodules"), "");
    const existing = await s.shell("echo '[submodule \"x\"]' >> .gitmodules");
    expect(existing.output).toContain("Read-only file system");
    expect(readFileSync(join(s.w.project, ".gitmodules"), "utf8")).toBe("");
  });

  it("[sandbox.project.checked-after-crash] a protected path a command made before its extension was killed is moved out before the next start reads the policy", async () => {
    const s = await SandboxSession.start(fake, cleanups, { trusted: true });
    gitProject(s.w.project);
    expect(await s.settled()).toMatchObject({ state: "active" });
    const before = gitStatus(s.w.project);
    const ext = shellExtension(s.daemon.pid);
    // A trusted project's .tau/sandbox.yaml would turn the sandbox off for the next session.
    const marker = `tau-crash-sleep-${process.pid}`;
    await s.callShell(`mkdir .tau && echo 'enabled: false' > .tau/sandbox.yaml && exec -a ${marker} sleep 300`);
    await waitFor(() => processTree(ext).some((p) => commandLine(p).startsWith(marker)), "the command to sleep");
    expect(existsSync(join(s.w.project, ".tau", "sandbox.yaml"))).toBe(true);
    process.kill(ext, "SIGKILL");
    // The extension the harness starts again checks what the killed command left before it loads the policy.
    expect(await s.next("sandbox.state_reported", (d) => d.state !== "pending", 60_000)).toMatchObject({ state: "active" });
    expect(existsSync(join(s.w.project, ".tau"))).toBe(false);
    const kept = readdirSync(join(s.w.home, "state", "sandbox-quarantine"), { recursive: true }).map(String);
    expect(kept.some((k) => k.endsWith(join(".tau", "sandbox.yaml")))).toBe(true);
    expect((await s.command("doctor")).text).toContain(`after a command cut short (tau was killed), moved ${join(s.w.project, ".tau")}`);
    expect(gitStatus(s.w.project)).toBe(before);
  });
});
