// What the declaration tests share (SPEC-extension-declarations): a real daemon with the provider
// extension against a loopback OpenAI-compatible server and test-dummy instances, a UI attached to
// it, and the system prompt the model of an agent was sent.
import { agentHarnessYaml, attachUi, daemonIn, useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, type ReceivedRequest } from "../../support/fake-openai.js";
import { waitFor, type StartedDaemon, type TestClient } from "../../support/daemon.js";

/** Registers the suite's fake model server and cleanups; returns how a test starts its session. */
export function declarationSuite() {
  let fake!: FakeOpenAI;
  useFakeOpenAI((s) => (fake = s), { perTest: true });
  const cleanups = useCleanups();
  return {
    fake: () => fake,
    cleanups,
    /** A daemon whose extensions are the provider and `extensions`, a UI attached, every model answer "ok". */
    async session(extensions: unknown[], settings: Record<string, unknown> = {}): Promise<{ c: TestClient; home: string; d: StartedDaemon; w: Workspace }> {
      const w = workspaceIn(cleanups, agentHarnessYaml(fake, { shell: false, extensions, settings }));
      const d = await daemonIn(cleanups, w.env, ["--project-root", w.project]);
      const c = await attachUi(cleanups, d, { tools: ["echo"] });
      fake.respondWith(() => textResponse("ok"));
      return { c, home: w.home, d, w };
    },
    /** The system prompt of the model request that carried `marker` (a prompt's unique text), once it was sent. */
    systemSent(marker: string): string | undefined {
      const request = fake.chatRequests.find((r) => messagesOf(r).some((m) => m.role === "user" && String(m.content).includes(marker)));
      return request === undefined ? undefined : String(messagesOf(request).find((m) => m.role === "system")?.content ?? "");
    },
    /** Waits for `agent`'s turn to finish; resolves with the system prompt the request with `marker` carried. */
    async turnOf(c: TestClient, agent: string, marker: string): Promise<string> {
      await c.delivered("agent.outer_turn_finished", (x) => x.agent_id === agent);
      return this.systemSent(marker) ?? "";
    },
    /** Prompts `agent_id` with `marker` and resolves with the system prompt its model request carried. */
    async systemOf(c: TestClient, agent_id: string, marker: string): Promise<string> {
      c.emit("ui.prompt_submit", { agent_id, mode: "queue", text: marker });
      await c.delivered("agent.outer_turn_finished", (x) => x.agent_id === agent_id);
      return this.systemSent(marker) ?? "";
    },
  };
}

type Msg = { role: string; content?: unknown };
const messagesOf = (r: ReceivedRequest): Msg[] => (r.body as { messages: Msg[] }).messages;

/** A test-dummy instance (with `driver: true` it takes the test's custom events). */
export const dummy = (name: string, config: Record<string, unknown>) => ({ name, kind: "tool", command: ["tau", "ext", "test-dummy"], config, startup_timeout_seconds: 30 });

/** A fragment or context entry as the system prompt renders it. */
export const rendered = (tag: "extension_fragment" | "agent_context", instance: string, key: string, text: string) => `<${tag} instance="${instance}" key="${key}">\n${text}\n</${tag}>`;

/** Submits `marker` to `agent` and waits until the harness has taken it in (it may not start). */
export async function submit(c: TestClient, agent: string, marker: string): Promise<void> {
  c.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text: marker });
  await c.delivered("agent.prompt_submitted", (x) => x.agent_id === agent && x.text === marker);
}

/** Waits for `event` to commit, then for the daemon to have handled everything before it. */
export async function committed(c: TestClient, event: string, pred: (d: Record<string, unknown>) => boolean): Promise<void> {
  await waitFor(() => c.deliveriesOf(event, pred).length > 0, `${event} to commit`, 30_000);
  await c.sync();
}
