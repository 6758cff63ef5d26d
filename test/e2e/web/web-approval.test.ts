// A host `web_fetch` may not reach by the sandbox's network policy is asked about as a sandboxed
// command's connection is (SPEC-web, "Hosts"; SPEC-sandbox, "Approvals"): a real daemon, an attached
// UI answering `sandbox.approval_requested`, the scripted model and a loopback page server.
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { LoopbackServer } from "../../support/web.js";
import { SandboxSession } from "../sandbox/support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

async function site(): Promise<LoopbackServer> {
  const s = await LoopbackServer.start((path) => (path === "/page" ? (_req, res) => void res.writeHead(200, { "content-type": "text/plain" }).end("the page's text") : undefined));
  cleanups.push(() => s.close());
  return s;
}

describe("web_fetch asks about a host as the sandbox does", () => {
  it("[web.hosts.approval] a host no rule allows is asked about, naming the call, and published again for a UI that attaches; allow fetches it, and the next fetch asks again", async () => {
    const page = await site();
    const s = await SandboxSession.start(fake, cleanups, { harnessYaml: JSON.stringify({ model: "fake-model", web: {} }) });
    const url = `${page.url}/page`;
    const callId = await s.callTool("web_fetch", { url });
    const ask = await s.approval((d) => d.call_id === callId);
    expect(ask).toMatchObject({ kind: "network", target: `127.0.0.1:${new URL(page.url).port}`, choices: ["allow", "deny"], agent_id: s.agentId, command: `web_fetch ${url}` });
    expect(page.requests).toHaveLength(0);
    // A UI that attaches asks for the prompts still open: this one is published again, the same.
    expect((await s.command("pending")).ok).toBe(true);
    expect(await s.approval((d) => d.approval_id === ask.approval_id)).toEqual(ask);
    // A choice the prompt did not offer answers nothing.
    s.answer(ask.approval_id, "allow_adapt");
    s.answer(ask.approval_id, "allow");
    expect(await s.next("sandbox.approval_resolved", (d) => d.approval_id === ask.approval_id)).toMatchObject({ outcome: "allowed" });
    const r = await s.result(callId);
    expect(r.outcome).toBe("ok");
    expect(r.output).toContain("the page's text");
    // `allow` released that fetch only.
    const again = await s.callTool("web_fetch", { url });
    const second = await s.approval((d) => d.call_id === again);
    s.answer(second.approval_id, "allow");
    expect((await s.result(again)).output).toContain("the page's text");
    expect(page.requests).toHaveLength(2);
  }, 120_000);

  it("[web.hosts.deny] deny refuses the fetch and the host for the rest of the session, without asking again", async () => {
    const page = await site();
    const s = await SandboxSession.start(fake, cleanups, { harnessYaml: JSON.stringify({ model: "fake-model", web: {} }) });
    const url = `${page.url}/page`;
    const callId = await s.callTool("web_fetch", { url });
    const ask = await s.approval((d) => d.call_id === callId);
    s.answer(ask.approval_id, "deny");
    expect(await s.next("sandbox.approval_resolved", (d) => d.approval_id === ask.approval_id)).toMatchObject({ outcome: "denied" });
    const r = await s.result(callId);
    expect(r.outcome).toBe("error");
    expect(r.output).toContain("was not fetched: the user refused this host (for the rest of the session)");
    const later = await s.tool("web_fetch", { url });
    expect(later.output).toContain("was not fetched: the user refused this host for the rest of the session");
    expect(page.requests).toHaveLength(0);
  }, 120_000);

  it("[web.hosts.cancel-revokes] cancelling the turn withdraws the prompt; a late allow fetches nothing", async () => {
    const page = await site();
    const s = await SandboxSession.start(fake, cleanups, { harnessYaml: JSON.stringify({ model: "fake-model", web: {} }) });
    const callId = await s.callTool("web_fetch", { url: `${page.url}/page` });
    const ask = await s.approval((d) => d.call_id === callId);
    s.client.emit("agent.cancel_request", { agent_id: s.agentId });
    expect(await s.next("sandbox.approval_resolved", (d) => d.approval_id === ask.approval_id)).toEqual({ approval_id: ask.approval_id, outcome: "revoked" });
    expect(await s.next("tool.result", (d) => d.call_id === callId)).toMatchObject({ outcome: "cancelled" });
    expect(await s.next("agent.outer_turn_finished")).toMatchObject({ outcome: "cancelled" });
    s.answer(ask.approval_id, "allow");
    // The cancelled turn left its scripted closing answer unused: a prompt takes it.
    s.client.emit("ui.prompt_submit", { agent_id: s.agentId, mode: "queue", text: "go on" });
    await s.next("agent.outer_turn_finished");
    // The next call's prompt comes after the late answer was handled: it was the web extension's next message.
    const next = await s.callTool("web_fetch", { url: `${page.url}/page` });
    const again = await s.approval((d) => d.call_id === next);
    expect(again.approval_id).not.toBe(ask.approval_id);
    expect(page.requests).toHaveLength(0);
  }, 120_000);

  it("[web.hosts.session-grant] the session's :sandbox network grants apply to web_fetch: allow add fetches without asking, deny add refuses", async () => {
    const page = await site();
    const s = await SandboxSession.active(fake, cleanups, { harnessYaml: JSON.stringify({ model: "fake-model", web: {} }) });
    const url = `${page.url}/page`;
    expect(await s.command("network", "allow", "add", "127.0.0.1")).toMatchObject({ ok: true });
    const allowed = await s.tool("web_fetch", { url });
    expect(allowed.output).toContain("the page's text");
    expect(await s.command("network", "allow", "remove", "127.0.0.1")).toMatchObject({ ok: true });
    expect(await s.command("network", "deny", "add", "127.0.0.1")).toMatchObject({ ok: true });
    const refused = await s.tool("web_fetch", { url });
    expect(refused.output).toContain(`127.0.0.1:${page.port} was not fetched: :sandbox network deny refuses it this session`);
    expect(page.requests).toHaveLength(1);
  }, 120_000);
});
