// The host's loopback is not on the default network allowlist (SPEC-sandbox, "Configuration"): a
// model's command reaching a service on the host's loopback — tau's own among them — through the
// sandbox's proxy is asked about like any other host, however it spells the address, and refused
// where nobody is asked; a grant (`:sandbox network allow add localhost`, or sandbox.yaml) lets it
// through. Through a real daemon, real bubblewrap and a loopback HTTP server, with no sandbox.yaml.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { textResponse, toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { runJsonEvent, runTau } from "../../support/run-tau.js";
import { SandboxSession, useLoopbackHost } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

/** The service on the host's loopback the commands try to reach (on 127.0.0.1 and ::1). */
const host = useLoopbackHost();

/** Ways to write the host's loopback in a URL. */
const SPELLINGS = ["localhost", "127.0.0.1", "[::1]", "127.1", "2130706433", "0x7f000001", "LOCALHOST", "localhost.", "[::ffff:127.0.0.1]", "0.0.0.0", "api.localhost"];

// Through the sandbox's proxy (HTTP_PROXY), as a command reaches anything outside the sandbox.
const fetch = (hostPart: string, port: number, path = "") => `curl -sS --noproxy '' -m 30 http://${hostPart}:${port}/${path}`;

/** `tau run --approval never --json`: the output of its one `shell` call, which runs `command`. */
async function headlessShell(env: NodeJS.ProcessEnv, cwd: string, command: string): Promise<string> {
  fake.enqueue(toolCallResponse([{ id: "call_run", name: "shell", arguments: [JSON.stringify({ command })] }]), textResponse("done"));
  const r = await runTau(["run", "--approval", "never", "--json", "-p", "fetch it"], { env, cwd });
  expect(r.code).toBe(0);
  return String(runJsonEvent(r.stdout, "tool.result")?.output);
}

describe("the host's loopback", () => {
  it("[sandbox.net.loopback-not-default] by default every spelling of the host's loopback is asked about before anything reaches it; a session grant lets localhost through", async () => {
    const port = await host.start({ ipv6: true });
    const s = await SandboxSession.start(fake, cleanups);
    expect(await s.settled()).toMatchObject({ state: "active" });

    // One connection after another: each waits on its own prompt, and nothing reached the
    // service before the prompt was answered.
    // The last goes through the sandbox's SOCKS proxy instead (the runtime's ALL_PROXY for other protocols).
    const tries = [...SPELLINGS.map((h, i) => `${fetch(h, port, `try-${i}`)} || echo "failed ${h}"`), `curl -sS --noproxy '' -m 30 -x "$FTP_PROXY" http://localhost:${port}/try-${SPELLINGS.length} || echo "failed socks"`];
    const callId = await s.callShell(tries.join("; "));
    const targets: string[] = [];
    for (let i = 0; i < tries.length; i++) {
      const ask = await s.approval();
      expect(ask).toMatchObject({ kind: "network", agent_id: s.agentId, call_id: callId });
      targets.push(String(ask.target));
      expect(host.paths).not.toContain(`/try-${i}`);
      s.answer(ask.approval_id, "allow");
    }
    const r = await s.result(callId);
    expect(targets).toHaveLength(tries.length);
    expect(r.output).toContain("hello from the host");
    // Allowed, the SOCKS connection did reach the service: that way was asked about too.
    expect(host.paths).toContain(`/try-${SPELLINGS.length}`);
    expect(s.client.deliveries().filter((d) => d.name === "sandbox.approval_requested")).toHaveLength(0);

    // Granted for the session: localhost is reached unasked.
    expect(await s.command("network", "allow", "add", "localhost")).toEqual({ ok: true, text: "network allow: added localhost (this session only)" });
    const hits = host.hits;
    expect((await s.shell(fetch("localhost", port))).output).toBe("hello from the host\n[exit code 0]");
    expect(host.hits).toBe(hits + 1);
    expect(s.client.deliveries().filter((d) => d.name === "sandbox.approval_requested")).toHaveLength(0);
  });

  it("[sandbox.net.loopback-not-default] where nobody is asked, a loopback connection is refused with the fix; localhost in sandbox.yaml lets it through", async () => {
    const port = await host.start();
    const w = workspaceIn(cleanups);
    const env = { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-loop", OPENAI_MODEL: "fake-model" };
    const refused = await headlessShell(env, w.project, fetch("localhost", port));
    expect(refused).not.toContain("hello from the host");
    expect(refused).toContain(`[sandbox: a connection to localhost:${port} was refused: localhost is not on the network allowlist and nobody was asked (non-interactive); the user can allow it with \`:sandbox network allow add localhost\` in the interactive UI]`);
    expect(host.hits).toBe(0);

    writeFileSync(join(w.home, "config", "sandbox.yaml"), "network:\n  allowed_domains: [localhost]\n");
    expect(await headlessShell(env, w.project, fetch("localhost", port))).toContain("hello from the host\n[exit code 0]");
    expect(host.hits).toBe(1);
  });
});
