// A model-made session title (`title_model`, SPEC-session-lifecycle "Titles"): after the first
// answer the harness asks the configured model, in a tool-less request of its own, for a title; the
// real daemon and provider extension against a loopback model server, read back by
// `tau session list --all`.
import { describe, expect, it } from "vitest";
import { runTau } from "../../support/run-tau.js";
import { isAlive, startDaemon, waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { errorResponse, textResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { SessionClient, type Delivery } from "../../../handwritten/cli/session-client.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

type Body = { model?: string; tools?: unknown[]; messages: Array<{ role: string; content?: unknown }> };
const body = (i: number) => fake.chatRequests[i]?.body as Body;

/** A detached daemon with `title_model` set, a UI attached to it, and one prompt answered. */
async function firstPrompt(titleAnswer: ReturnType<typeof textResponse>) {
  const w = workspaceIn(cleanups, "model: fake-model\ntitle_model: provider/fake-small\n");
  const env = { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-title", OPENAI_MODEL: "fake-model" };
  fake.setModels(["fake-model", "fake-small"]);
  fake.enqueue(textResponse("The flaky test raced the watcher; I made it wait for the write."), titleAnswer);
  const d = await startDaemon(env, ["--project-root", w.project]);
  cleanups.push(() => {
    if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
  });
  const client = await SessionClient.attach(d.socket, d.session_id);
  cleanups.push(() => client.close());
  const seen: Delivery[] = [];
  client.onDeliver((x) => seen.push(x));
  client.subscribe(["session.title_set", "harness.notice"], ["*"]);
  const agent = (await client.request("ui.create_agent", {})).agent_id;
  client.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text: "why does the sandbox test fail now and then?\nit is in test/e2e" });
  await waitFor(() => fake.chatRequests.length === 2, "the title request");
  const titles = () => seen.filter((x) => x.event.name === "session.title_set").map((x) => x.event.data as { title: string; origin: string });
  const listed = async () => {
    const r = await runTau(["session", "list", "--all", "--json"], { env });
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as Array<{ session_id: string; title: string | null }>).find((x) => x.session_id === d.session_id)?.title;
  };
  return { titles, listed, seen };
}

describe("model-made session titles", () => {
  it("[sessions.title.model-made] after the first answer, title_model writes the title in a tool-less request; listings show it", async () => {
    const { titles, listed } = await firstPrompt(textResponse('"Flaky sandbox test race."'));
    await waitFor(() => titles().length === 2, "the model's title");
    expect(titles()).toEqual([
      { title: "why does the sandbox test fail now and then?", origin: "first_prompt" },
      { title: "Flaky sandbox test race", origin: "model" },
    ]);
    // The title request: the configured model, no tools, the prompt and the answer in, nothing else.
    const req = body(1);
    expect(req.model).toBe("fake-small");
    expect(req.tools ?? []).toEqual([]);
    expect(req.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(String(req.messages[1]?.content)).toContain("why does the sandbox test fail now and then?\nit is in test/e2e");
    expect(String(req.messages[1]?.content)).toContain("I made it wait for the write.");
    expect(await listed()).toBe("Flaky sandbox test race");
  });

  it("[sessions.title.model-failure-keeps-first] a failed title request leaves the first prompt's title", async () => {
    const { titles, listed, seen } = await firstPrompt(errorResponse(400, { code: "bad_request", message: "no titles today" }));
    // The user is told why, once; nothing more is published or sent.
    const notices = () => seen.filter((x) => x.event.name === "harness.notice").map((x) => (x.event.data as { text: string }).text);
    await waitFor(() => notices().some((t) => t.includes("title_model")), "the notice");
    expect(notices()).toEqual(["title_model provider/fake-small wrote no session title (provider error (invalid_request)); the first prompt's line stays the title"]);
    expect(titles()).toEqual([{ title: "why does the sandbox test fail now and then?", origin: "first_prompt" }]);
    expect(await listed()).toBe("why does the sandbox test fail now and then?");
    expect(fake.chatRequests).toHaveLength(2);
  });
});
