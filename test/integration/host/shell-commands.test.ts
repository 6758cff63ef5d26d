import { afterEach, describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TestClient, isAlive, startDaemon, tauHome, waitFor } from "../../support/daemon.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()?.();
});

describe("user shell commands", () => {
  it("[shell.user-command.routed] routes !cmd and !!cmd to the shell extension and records the canonical result", async () => {
    const h = tauHome();
    cleanups.push(h.dispose);
    const project = join(h.home, "project");
    mkdirSync(project);
    writeFileSync(join(h.home, "config", "harness.yaml"), JSON.stringify({ extensions: [{ name: "shell", command: ["tau", "ext", "shell"], startup_timeout_seconds: 30 }] }));
    const d = await startDaemon(h.env, ["--project-root", project]);
    cleanups.push(() => {
      if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
    });
    const ui = await TestClient.ui(d.socket);
    ui.send({ message: "subscribe", payload: { historical: ["tool.register"], live: ["*"] } });
    await waitFor(() => ui.deliveries().some((x) => x.name === "tool.register" && x.data.name === "shell"), "the shell tool", 30_000);
    ui.emit("ui.create_agent", { request_id: "r1" });
    const m = await ui.next((x) => x.message === "direct");
    const agentId = m.message === "direct" ? String(m.payload.event.data.agent_id) : "";
    ui.emit("shell.command_request", { agent_id: agentId, request_id: "u-1", command: "echo hello; pwd; exit 3", include_in_context: true });
    ui.emit("shell.command_request", { agent_id: agentId, request_id: "u-2", command: "echo ui-only", include_in_context: false });
    await waitFor(() => ui.deliveries().filter((x) => x.name === "shell.command_finished").length === 2, "both commands", 30_000);
    const finished = ui.deliveries().filter((x) => x.name === "shell.command_finished");
    const first = finished.find((x) => x.data.request_id === "u-1")!.data;
    expect(first).toMatchObject({ exit_code: 3, include_in_context: true, command: "echo hello; pwd; exit 3" });
    expect(String(first.output)).toContain("hello");
    expect(String(first.output)).toContain(project);
    expect(finished.find((x) => x.data.request_id === "u-2")?.data).toMatchObject({ exit_code: 0, include_in_context: false });
    // The report came from the owner; a late report for a finished command changes nothing.
    expect(ui.deliveries().filter((x) => x.name === "shell.command_started").map((x) => x.data.owner)).toEqual(["shell", "shell"]);
    // Durable: the canonical facts are in the agent's journal (replayed to a late subscriber).
    const late = await TestClient.ui(d.socket);
    late.send({ message: "subscribe", payload: { historical: ["shell.command_finished"], live: [] } });
    await late.next((x) => x.message === "deliver" && x.payload.event.name === "session.replay_complete");
    // (in the order they finished, which the two commands decide)
    expect(late.deliveries().filter((x) => x.name === "shell.command_finished").map((x) => x.data.request_id).sort()).toEqual(["u-1", "u-2"]);
    ui.close();
    late.close();
  });
});

describe("per-agent working directory", () => {
  it("[shell.workdir.agent-metadata] cd records the directory as agent metadata and later calls and commands use it", async () => {
    const h = tauHome();
    cleanups.push(h.dispose);
    const project = join(h.home, "project");
    mkdirSync(join(project, "sub"), { recursive: true });
    writeFileSync(
      join(h.home, "config", "harness.yaml"),
      JSON.stringify({
        extensions: [
          { name: "shell", command: ["tau", "ext", "shell"], startup_timeout_seconds: 30 },
          { name: "driver", command: ["tau", "ext", "test-dummy"], config: { tools: ["echo"], driver: true }, call_tools: ["*"], startup_timeout_seconds: 30 },
        ],
      }),
    );
    const d = await startDaemon(h.env, ["--project-root", project]);
    cleanups.push(() => {
      if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
    });
    const ui = await TestClient.ui(d.socket);
    ui.send({ message: "subscribe", payload: { historical: ["tool.register"], live: ["*"] } });
    await waitFor(() => ["cd", "echo"].every((t) => ui.deliveries().some((x) => x.name === "tool.register" && x.data.name === t)), "the tools", 30_000);
    ui.emit("ui.create_agent", { request_id: "r1" });
    const m = await ui.next((x) => x.message === "direct");
    const agentId = m.message === "direct" ? String(m.payload.event.data.agent_id) : "";
    const call = async (id: string, tool: string, args: unknown) => {
      ui.emit("extension.event", { category: "test", name: "call", payload: { agent_id: agentId, call_id: id, tool, arguments: args } });
      await waitFor(() => ui.deliveries().some((x) => x.name === "tool.result" && x.data.call_id === id), id, 30_000);
      return ui.deliveries().find((x) => x.name === "tool.result" && x.data.call_id === id)!.data;
    };
    expect(await call("c-cd", "cd", { path: "sub" })).toMatchObject({ outcome: "ok", output: `working directory: ${join(project, "sub")}` });
    await waitFor(() => ui.deliveries().some((x) => x.name === "agent.metadata_set" && x.data.key === "shell.cwd"), "the metadata fact");
    expect(ui.deliveries().find((x) => x.name === "agent.metadata_set")?.data).toMatchObject({ value: join(project, "sub"), by: { class: "extension", instance: "shell" } });
    expect(String((await call("c-pwd", "shell", { command: "pwd" })).output)).toContain(join(project, "sub"));
    expect(await call("c-bad", "cd", { path: "missing-dir" })).toMatchObject({ outcome: "error" });
    ui.close();
  });
});
