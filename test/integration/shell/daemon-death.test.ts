// Commands the shell extension started do not outlive their daemon: killed (SIGKILL) or stopped in
// order, the extension ends every process group it started before it exits; killed itself, its
// reaper ends them (SPEC-shell-tools).
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TestClient, isAlive, startDaemon, tauHome, waitFor, type StartedDaemon } from "../../support/daemon.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()?.();
});

/** Live (not zombie) processes whose process group is one of `groups`, from /proc. */
function membersOf(groups: readonly number[]): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (groups.includes(Number(pgrp)) && state !== "Z" && state !== "X") found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** A daemon of a fresh TAU_HOME with the shell extension and a driver that makes tool calls. */
async function daemonWithShell(): Promise<{ d: StartedDaemon; ui: TestClient; agentId: string; project: string }> {
  const h = tauHome();
  cleanups.push(h.dispose);
  const project = join(h.home, "project");
  mkdirSync(project);
  writeFileSync(
    join(h.home, "config", "harness.yaml"),
    JSON.stringify({
      extensions: [
        // Unsandboxed: the test finds each command's process group by the `$$` it reports, which a
        // sandboxed command (a pid namespace of its own) cannot tell (SPEC-sandbox).
        { name: "shell", command: ["tau", "ext", "shell"], config: { sandbox: { enabled: false } }, startup_timeout_seconds: 30 },
        { name: "driver", command: ["tau", "ext", "test-dummy"], config: { tools: ["echo"], driver: true }, call_tools: ["*"], startup_timeout_seconds: 30 },
      ],
    }),
  );
  const d = await startDaemon(h.env, ["--project-root", project]);
  cleanups.push(() => {
    if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
  });
  const ui = await TestClient.ui(d.socket);
  cleanups.push(() => ui.close());
  ui.send({ message: "subscribe", payload: { historical: ["tool.register"], live: ["*"] } });
  await waitFor(() => ["shell", "echo"].every((t) => ui.deliveries().some((x) => x.name === "tool.register" && x.data.name === t)), "the tools", 30_000);
  ui.emit("ui.create_agent", { request_id: "r1" });
  const m = await ui.next((x) => x.message === "direct");
  const agentId = m.message === "direct" ? String(m.payload.event.data.agent_id) : "";
  return { d, ui, agentId, project };
}

/**
 * Starts, through `d`, a running `shell` tool call, a running user command whose processes ignore
 * SIGTERM, and a finished tool call that left a background process behind; returns their process
 * groups once every one of them has a live member. Whatever the test's outcome, the groups are
 * killed afterwards.
 */
async function startCommands(s: { ui: TestClient; agentId: string; project: string }): Promise<number[]> {
  const { ui, agentId, project } = s;
  const names = ["tool", "user", "left"];
  cleanups.push(() => {
    for (const name of names) {
      const file = join(project, `${name}.group`);
      if (!existsSync(file)) continue;
      try {
        process.kill(-Number(readFileSync(file, "utf8")), "SIGKILL");
      } catch {
        // already gone
      }
    }
  });
  const call = (callId: string, command: string) =>
    ui.emit("extension.event", { category: "test", name: "call", payload: { agent_id: agentId, call_id: callId, tool: "shell", arguments: { command } } });
  // `$$` is the bash the extension started: its pid is the group's id. `sleep` stays in that group.
  call("c-running", "sleep 300 & echo $$ > tool.group; wait");
  ui.emit("shell.command_request", { agent_id: agentId, request_id: "u-1", command: "trap '' TERM; sleep 300 & echo $$ > user.group; wait", include_in_context: false });
  call("c-left", "sleep 300 > /dev/null 2>&1 & echo $$ > left.group");
  await waitFor(() => ui.deliveries().some((x) => x.name === "tool.result" && x.data.call_id === "c-left"), "the finished call", 30_000);
  const groupOf = (name: string): number | undefined => {
    const file = join(project, `${name}.group`);
    const text = existsSync(file) ? readFileSync(file, "utf8") : "";
    return text.endsWith("\n") ? Number(text) : undefined;
  };
  await waitFor(() => names.every((n) => groupOf(n) !== undefined), "the commands to start", 30_000);
  const groups = names.map((n) => groupOf(n) as number);
  await waitFor(() => groups.every((g) => membersOf([g]).length > 0), "a live member in every group", 30_000);
  expect(ui.deliveries().some((x) => x.name === "tool.result" && x.data.call_id === "c-running")).toBe(false);
  return groups;
}

describe("shell commands and the daemon's death", () => {
  it("[shell.exec.killed-with-daemon] SIGKILL of the daemon: the shell extension ends every process group it started, running or left behind", async () => {
    const s = await daemonWithShell();
    const groups = await startCommands(s);
    process.kill(s.d.pid, "SIGKILL");
    // Bounded: the extension sees its input end at once, then gives SIGTERM a short grace.
    await waitFor(() => membersOf(groups).length === 0, "no process left in the commands' groups", 15_000).catch(() => {
      throw new Error(`still running after the daemon was killed: ${membersOf(groups).join(", ")}`);
    });
  });

  it("[shell.exec.killed-extension] SIGKILL of the shell extension itself: its reaper ends every process group it started, running or left behind", async () => {
    const s = await daemonWithShell();
    const groups = await startCommands(s);
    const ext = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .find((p) => {
        try {
          const stat = readFileSync(`/proc/${p}/stat`, "utf8");
          return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === s.d.pid && readFileSync(`/proc/${p}/cmdline`, "utf8").includes("\0shell");
        } catch {
          return false;
        }
      });
    expect(ext).toBeDefined();
    process.kill(Number(ext), "SIGKILL");
    await waitFor(() => membersOf(groups).length === 0, "no process left in the commands' groups", 15_000).catch(() => {
      throw new Error(`still running after the extension was killed: ${membersOf(groups).join(", ")}`);
    });
  });

  it("[shell.exec.stopped-with-daemon] orderly stop of the daemon (SIGTERM): the shell extension ends every process group it started", async () => {
    const s = await daemonWithShell();
    const groups = await startCommands(s);
    process.kill(s.d.pid, "SIGTERM");
    await waitFor(() => membersOf(groups).length === 0, "no process left in the commands' groups", 15_000).catch(() => {
      throw new Error(`still running after the daemon stopped: ${membersOf(groups).join(", ")}`);
    });
    await waitFor(() => !isAlive(s.d.pid), "the daemon to exit", 15_000);
  });
});
