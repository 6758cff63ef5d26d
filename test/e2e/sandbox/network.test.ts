// The sandbox's network isolation and the headless policy through a real daemon, real bubblewrap
// and a loopback HTTP server (SPEC-sandbox, GATE-sandbox).
import { existsSync, mkdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { textResponse, toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { runTau } from "../../support/run-tau.js";
import { waitFor } from "../../support/wait.js";
import { SandboxSession, useLoopbackHost } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

/** The host outside the sandbox the commands connect to. */
const host = useLoopbackHost();

// Through the sandbox's proxy (HTTP_PROXY): without `--noproxy ''` curl would go straight to the
// sandbox's own loopback, which has nothing listening.
const fetchCommand = (port: number) => `curl -sS -f --noproxy '' -m 20 http://127.0.0.1:${port}/`;

describe("the sandbox's network", () => {
  it("[sandbox.net.loopback-asks] a loopback host off the allowlist waits for approval, succeeds after it, and fails after a denial", async () => {
    const port = await host.start();
    const s = await SandboxSession.start(fake, cleanups, { globalYaml: "network:\n  allowed_domains: [only.example]\n" });
    expect(await s.settled()).toMatchObject({ state: "active" });

    const callId = await s.callShell(fetchCommand(port));
    const ask = await s.approval();
    expect(ask).toMatchObject({ kind: "network", target: `127.0.0.1:${port}`, choices: ["allow", "deny"], call_id: callId });
    // The connection waits for the answer: nothing reached the server yet.
    expect(host.hits).toBe(0);
    s.answer(ask.approval_id, "allow");
    const allowed = await s.result(callId);
    expect(allowed.output).toBe("hello from the host\n[exit code 0]");
    expect(host.hits).toBe(1);

    // Approval released only that connection: the next one asks again; a denial refuses it, and
    // every later connection to that host is refused at once, without asking.
    const second = await s.callShell(fetchCommand(port));
    const ask2 = await s.approval();
    s.answer(ask2.approval_id, "deny");
    const denied = await s.result(second);
    expect(denied.output).not.toContain("hello from the host");
    expect(denied.output).toMatch(/\[exit code [1-9]\d*\]\n/);
    // The proxy's refusal says nothing of why: the result does, so the model does not retry it.
    expect(denied.output).toContain(`[sandbox: a connection to 127.0.0.1:${port} was refused: the user refused 127.0.0.1 for this session]`);
    const third = await s.shell(fetchCommand(port));
    // Refused by the proxy's own deny list: no question, and nothing the extension sees.
    expect(third.output).toMatch(/\[exit code [1-9]\d*\]$/);
    expect(host.hits).toBe(1);
    // The third was refused without a prompt (the two above were taken from the inbox as they came).
    expect(s.client.deliveries().filter((d) => d.name === "sandbox.approval_requested")).toHaveLength(0);
  });

  it("[sandbox.net.concurrent-asks-one-prompt] concurrent connections to one host share one prompt; allowing releases them all; a later connection asks again", async () => {
    const port = await host.start();
    // A reviewer that escalates: the two connections share one review, then one prompt.
    const s = await SandboxSession.start(fake, cleanups, { globalYaml: "network:\n  allowed_domains: [only.example]\nclassifier: provider/fake-model\n" });
    expect(await s.settled()).toMatchObject({ state: "active" });
    const escalate = () => textResponse(JSON.stringify({ decision: "approve", probability: 0.2, confidence: 0.9, reason: "not sure" }));
    const escalated = () => s.next("sandbox.diagnostic_recorded", (d) => d.kind === "network" && d.outcome === "review_escalated");
    // The doctor counts the connections held by the proxy: the answer is given once both wait.
    const bothWaiting = () => waitFor(async () => (await s.command("doctor")).text.includes("connections waiting for a decision: 2\n"), "both connections waiting", { timeoutMs: 30_000, pollMs: 50 });

    // One command, two connections at once to the same host.
    const callId = "call_sbx_pair";
    const both = `${fetchCommand(port)} > one.txt & ${fetchCommand(port)} > two.txt & wait; cat one.txt two.txt`;
    fake.enqueue(toolCallResponse([{ id: callId, name: "shell", arguments: [JSON.stringify({ command: both })] }]), escalate(), textResponse("noted"));
    s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: "fetch it twice" });
    const ask = await s.approval();
    expect(ask).toMatchObject({ kind: "network", target: `127.0.0.1:${port}`, call_id: callId });
    await escalated();
    await bothWaiting();
    // Both connections are waiting, on the one prompt: nothing reached the server, nothing else was asked.
    expect(host.hits).toBe(0);
    expect(s.client.deliveries().filter((d) => d.name === "sandbox.approval_requested")).toHaveLength(0);
    s.answer(ask.approval_id, "allow");
    const r = await s.result(callId);
    expect(r.output).toBe("hello from the host\nhello from the host\n[exit code 0]");
    expect(host.hits).toBe(2);
    expect(s.client.deliveries().filter((d) => d.name === "sandbox.approval_requested")).toHaveLength(0);

    // The approval was for those connections only: a later one asks again.
    const later = "call_sbx_later";
    fake.enqueue(toolCallResponse([{ id: later, name: "shell", arguments: [JSON.stringify({ command: fetchCommand(port) })] }]), escalate(), textResponse("noted"));
    s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: "fetch it again" });
    const again = await s.approval();
    expect(again).toMatchObject({ kind: "network", target: `127.0.0.1:${port}`, call_id: later });
    expect(again.approval_id).not.toBe(ask.approval_id);
    s.answer(again.approval_id, "allow");
    expect((await s.result(later)).output).toBe("hello from the host\n[exit code 0]");
    expect(host.hits).toBe(3);
  });

  it("[sandbox.net.shared-namespace] the session's commands share one network namespace, made once, which is not the host's", async () => {
    const s = await SandboxSession.active(fake, cleanups);
    const inside = /^net:\[\d+\]\n\[exit code 0\]$/;
    const first = await s.shell("readlink /proc/self/ns/net");
    const second = await s.shell("readlink /proc/self/ns/net");
    expect(first.output).toMatch(inside);
    // A command the shared namespace did not take would get a namespace of its own, as the runtime wraps it.
    expect(second.output).toBe(first.output);
    expect(first.output.startsWith(`${readlinkSync("/proc/self/ns/net")}\n`)).toBe(false);
  });

  it("[sandbox.net.no-daemon-socket] a sandboxed command cannot open the daemon's socket", async () => {
    const s = await SandboxSession.start(fake, cleanups);
    expect(await s.settled()).toMatchObject({ state: "active" });
    const probe = `python3 -c "import socket,sys; c=socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); print('connected')" ${s.daemon.socket}`;
    const r = await s.shell(probe);
    expect(r.output).not.toContain("connected\n");
    expect(r.output).toMatch(/Permission denied|Operation not permitted/);
  });

  it("[sandbox.run.approval-never] tau run never waits on a prompt: a denial is refused with the suggested command", async () => {
    const w = workspaceIn(cleanups);
    const outside = join(w.home, "outside");
    mkdirSync(outside);
    const env = { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-loop", OPENAI_MODEL: "fake-model" };
    fake.enqueue(toolCallResponse([{ id: "call_w", name: "shell", arguments: [JSON.stringify({ command: `echo x > ${join(outside, "f")}` })] }]), textResponse("understood"));
    const started = Date.now();
    const r = await runTau(["run", "--approval", "never", "--json", "-p", "write it"], { env, cwd: w.project });
    expect(r.code).toBe(0);
    expect(Date.now() - started).toBeLessThan(60_000);
    const result = r.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { event: string; data: Record<string, unknown> })
      .find((e) => e.event === "tool.result");
    expect(String(result?.data.output)).toContain(`:sandbox filesystem allow-write add ${outside}`);
    expect(String(result?.data.output)).toContain("nobody was asked (non-interactive)");
    expect(existsSync(join(outside, "f"))).toBe(false);
    // The same run without a flag behaves the same; on-request has no UI to ask and is refused.
    const refused = await runTau(["run", "--approval", "on-request", "-p", "x"], { env, cwd: w.project });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--approval on-request needs a UI to ask");
  });
});
