// Descriptors tau inherited never reach a sandboxed command (SPEC-sandbox, "Descriptors"): the real
// `tau` command, started through its launcher lines with a connected Unix socket on fd 40 as a
// parent process might leave one, runs a scripted model whose `shell` command tries every way to
// that socket from inside the sandbox — the descriptor itself and every /proc/PID/fd/40 it can see
// (bubblewrap's init is PID 1 there). Nothing arrives at the socket's other end.
import { spawn, type StdioOptions } from "node:child_process";
import { once } from "node:events";
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { runJsonEvent } from "../../support/run-tau.js";
import { textResponse, toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { TAU_BIN } from "../../support/paths.js";
import { waitFor } from "../../support/wait.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

/** Runs the `tau` command (its launcher lines included) with `socket` as its fd 40; its stdout once it exits. */
async function tauWithFd40(args: string[], env: NodeJS.ProcessEnv, cwd: string, socket: Socket): Promise<{ code: number | null; stdout: string }> {
  const stdio: StdioOptions = Array.from({ length: 41 }, (_, fd) => (fd === 40 ? socket : fd < 3 ? "pipe" : "ignore"));
  const child = spawn(TAU_BIN, args, { cwd, env: { ...process.env, ...env }, stdio });
  let stdout = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr?.resume();
  child.stdin?.end();
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout };
}

describe("descriptors tau inherited", () => {
  it("[sandbox.fd.inherited-closed] a connected socket tau inherited on fd 40 reaches no process in the sandbox: the command cannot write to it directly or through /proc", async () => {
    const w = workspaceIn(cleanups);
    const env = { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-loop", OPENAI_MODEL: "fake-model" };
    // The other end of the socket: everything written to fd 40 by anyone arrives here.
    const path = join(w.home, "parent.sock");
    let received = "";
    const server = createServer((c) => c.setEncoding("utf8").on("data", (d: string) => (received += d)));
    server.listen(path);
    await once(server, "listening");
    cleanups.push(() => server.close());
    const socket = connect(path);
    await once(socket, "connect");
    cleanups.push(() => socket.destroy());

    const probe = [
      `echo LEAK-DIRECT >&40 && echo wrote-fd-40`,
      `for f in /proc/[0-9]*/fd/40; do [ -e "$f" ] || continue; echo "seen $f"; echo LEAK-PROC > "$f" && echo "wrote $f"; done`,
      `echo "own descriptors: $(ls /proc/self/fd | tr '\\n' ' ')"`,
      `echo probe-done`,
    ].join("; ");
    fake.enqueue(toolCallResponse([{ id: "call_fd", name: "shell", arguments: [JSON.stringify({ command: probe })] }]), textResponse("probed"));
    const r = await tauWithFd40(["run", "--json", "-p", "probe the descriptors"], env, w.project, socket);
    expect(r.code).toBe(0);
    const output = String(runJsonEvent(r.stdout, "tool.result")?.output);
    expect(output).toContain("probe-done");
    expect(output).not.toContain("wrote");
    expect(output).not.toContain("seen /proc/");
    // 0-2 and the descriptor `ls` opens on the folder it lists.
    expect(output).toMatch(/own descriptors: 0 1 2 3 \n/);

    // What was written to the socket before this arrives before it: only the test's own mark.
    socket.write("END");
    await waitFor(() => received.includes("END"), "the test's own write to arrive");
    expect(received).toBe("END");
  });
});
