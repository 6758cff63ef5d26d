// Model discovery and choice against a loopback OpenAI-compatible server (SPEC-provider-chat-completions,
// "Models"): the real `tau run` and daemon, the provider's GET /models, what it decides and what the
// session shows.
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { TAU_BIN } from "../../support/paths.js";
import { runTau } from "../../support/run-tau.js";
import { isAlive, startDaemon, waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { FakeOpenAI, jsonResponse, textResponse, type ScriptedResponse } from "../../support/fake-openai.js";
import { SessionClient, type Delivery } from "../../../handwritten/cli/session-client.js";

// One loopback server per test: each test decides what its GET /models answers.
let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

const KEY = "sk-models-4f1c9a7e2b";

/** A fresh TAU_HOME with the default extensions and no configured model, pointed at the fake server. */
function workspace(extra: NodeJS.ProcessEnv = {}): Workspace {
  const w = workspaceIn(cleanups, "{}\n");
  return { ...w, env: { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: KEY, OPENAI_MODEL: undefined, ...extra } };
}

/** The model the chat request at `index` asked for. */
const modelOf = (index: number) => (fake.chatRequests[index]?.body as { model?: string } | undefined)?.model;

/** The one session's extensions.log. */
function extensionsLog(home: string): string {
  const sessions = join(home, "state", "sessions");
  return readdirSync(sessions)
    .map((id) => {
      try {
        return readFileSync(join(sessions, id, "extensions.log"), "utf8");
      } catch {
        return "";
      }
    })
    .join("");
}

/** A detached daemon of `w` and a UI client attached to it that keeps every delivery. */
async function session(w: Workspace): Promise<{ client: SessionClient; seen: Delivery[]; attach: () => Promise<{ client: SessionClient; seen: Delivery[] }> }> {
  const d = await startDaemon(w.env);
  cleanups.push(() => {
    if (isAlive(d.pid)) process.kill(d.pid, "SIGKILL");
  });
  const attach = async () => {
    const client = await SessionClient.attach(d.socket, d.session_id);
    cleanups.push(() => client.close());
    const seen: Delivery[] = [];
    client.onDeliver((x) => seen.push(x));
    client.subscribe(["harness.models_available", "harness.notice"], ["*"]);
    return { client, seen };
  };
  return { ...(await attach()), attach };
}

const latest = <N extends Delivery["event"]["name"]>(seen: Delivery[], name: N) =>
  seen.filter((d) => d.event.name === name).at(-1)?.event as Extract<Delivery["event"], { name: N }> | undefined;

describe("model discovery", () => {
  it("[provider.models.discovery-default] with only OPENAI_BASE_URL set, the first listed model answers, asked for once with the key", async () => {
    fake.setModels(["first-listed", "second-listed"]);
    fake.enqueue(textResponse("from the first"));
    const w = workspace();
    const r = await runTau(["run", "-p", "hello"], { env: w.env, cwd: w.project });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("from the first");
    expect(modelOf(0)).toBe("first-listed");
    expect(fake.modelRequests).toHaveLength(1);
    const listing = fake.modelRequests[0]!;
    expect(listing.path).toBe("/v1/models");
    expect(listing.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(listing.headers.accept).toBe("application/json");
    // OPENAI_MODEL still wins over the listing.
    fake.enqueue(textResponse("from the env"));
    const env = await runTau(["run", "-p", "hello"], { env: { ...w.env, OPENAI_MODEL: "second-listed" }, cwd: w.project });
    expect(env.code).toBe(0);
    expect(modelOf(1)).toBe("second-listed");
  });

  it("[provider.models.listing-cached] a session asks for the listing once, whatever its prompts and agents", async () => {
    fake.setModels(["m-one", "m-two"]);
    const w = workspace({ OPENAI_MODEL: "m-one" });
    const { client, seen } = await session(w);
    await waitFor(() => latest(seen, "harness.models_available")?.data.listed_providers?.includes("provider") === true, "the listed models");
    for (const model of [undefined, "m-two"]) {
      const agent = (await client.request("ui.create_agent", model ? { model } : {})).agent_id;
      for (const text of ["one", "two"]) {
        fake.enqueue(textResponse(`answer ${text}`));
        client.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text });
        await waitFor(() => seen.some((d) => d.event.name === "provider.response_finished" && d.event.data.agent_id === agent && d.event.data.text === `answer ${text}`), `the answer to ${text}`);
      }
    }
    expect(fake.chatRequests.map((_, i) => modelOf(i))).toEqual(["m-one", "m-one", "m-two", "m-two"]);
    expect(fake.modelRequests).toHaveLength(1);
  });

  const oversize = 4 * 1024 * 1024 + 1024;
  const fallbacks: Array<[string, ScriptedResponse, RegExp]> = [
    ["a 404", jsonResponse(404, { error: { message: "no such route", type: "invalid_request_error", code: null } }), /HTTP 404/],
    ["an answer that is not JSON", { status: 200, headers: { "content-type": "application/json" }, chunks: ["<html>not a model list</html>"] }, /not JSON/],
    ["a list without models", jsonResponse(200, { object: "list", data: [] }), /names no model/],
    // Valid JSON naming a model, but past the size cap: taken, `big` would answer.
    ["an oversize answer", { status: 200, headers: { "content-type": "application/json" }, chunks: [`{"data":[{"id":"big"}],"pad":"`, "x".repeat(oversize), `"}`] }, /larger than 4194304 bytes/],
    ["no answer in time", { headersDelayMs: 60_000, chunks: [] }, /no answer within 5000 ms/],
  ];
  it.each(fallbacks)("[provider.models.listing-fallback] %s falls back to the built-in model quietly, with a note in the extensions log", async (_what, answer, note) => {
    fake.setModels(answer);
    fake.enqueue(textResponse("fallback answer"));
    const w = workspace();
    const r = await runTau(["run", "-p", "hello"], { env: w.env, cwd: w.project });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(modelOf(0)).toBe("gpt-4o-mini");
    expect(fake.modelRequests).toHaveLength(1);
    const log = extensionsLog(w.home);
    expect(log).toMatch(note);
    expect(log).toContain("debug: no model listing (GET /models:");
    expect(log).not.toContain(KEY);
  });
});

describe("model choice", () => {
  it("[provider.models.unlisted-warning] a configured model the server does not list is still used, with one warning naming close matches", async () => {
    fake.setModels(["fake-model", "other-model"]);
    const w = workspace({ OPENAI_MODEL: "fake-modle" });
    const { client, seen, attach } = await session(w);
    // The warning is published before the models it is about.
    await waitFor(() => latest(seen, "harness.models_available")?.data.listed_providers !== undefined, "the listed models");
    expect(seen.some((d) => d.event.name === "harness.notice" && d.event.data.level === "warning")).toBe(true);
    const warnings = (from = seen) => from.filter((d) => d.event.name === "harness.notice" && d.event.data.level === "warning").map((d) => (d.event.data as { text: string }).text);
    expect(warnings()).toEqual(['provider provider: the server does not list the configured model "fake-modle" (close matches: fake-model); requests for it are still sent']);
    const available = latest(seen, "harness.models_available")!.data;
    expect(available.listed_providers).toEqual(["provider"]);
    expect(available.models.map((m) => [m.id, m.listed])).toEqual([
      ["fake-modle", false],
      ["fake-model", undefined],
      ["other-model", undefined],
    ]);
    // The configured model stays the default: the request goes out with it.
    fake.enqueue(textResponse("still sent"));
    const agent = (await client.request("ui.create_agent", {})).agent_id;
    client.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text: "hi" });
    await waitFor(() => fake.chatRequests.length === 1, "the chat request");
    expect(modelOf(0)).toBe("fake-modle");
    // A UI attaching later sees the warning too, once; nobody sees it twice.
    const late = await attach();
    await waitFor(() => latest(late.seen, "harness.models_available") !== undefined, "the late UI's snapshot");
    expect(warnings(late.seen)).toEqual(warnings());
    expect(warnings()).toHaveLength(1);
  });

  it("[run.model.unknown-refused] tau run --model refuses a model no provider lists, naming close matches, and sends nothing", async () => {
    fake.setModels(["fake-model", "other-model"]);
    const w = workspace();
    const r = await runTau(["run", "--model", "fake-modl", "-p", "hello"], { env: w.env, cwd: w.project });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('tau run: --model: unknown model "fake-modl": no provider lists it; close matches: fake-model [TAU-E0117]\n');
    expect(fake.chatRequests).toHaveLength(0);
    // With a configured model the run does not wait for the listing, the harness does: same refusal.
    const configured = await runTau(["run", "--model", "fake-modl", "-p", "hello"], { env: { ...w.env, OPENAI_MODEL: "fake-model" }, cwd: w.project });
    expect(configured.code).toBe(2);
    expect(configured.stderr).toContain("close matches: fake-model [TAU-E0117]");
    expect(fake.chatRequests).toHaveLength(0);
    // A listed model and a provider-qualified one are taken.
    fake.enqueue(textResponse("ok"), textResponse("ok"));
    expect((await runTau(["run", "--model", "other-model", "-p", "hello"], { env: w.env, cwd: w.project })).code).toBe(0);
    expect((await runTau(["run", "--model", "provider/fake-model", "-p", "hello"], { env: w.env, cwd: w.project })).code).toBe(0);
    expect([modelOf(0), modelOf(1)]).toEqual(["other-model", "fake-model"]);
  });

  it("[run.model.unlisted-accepted] without a listing, tau run --model sends the model it is given", async () => {
    fake.setModels(jsonResponse(404, { error: { message: "not here" } }));
    fake.enqueue(textResponse("ok"));
    const w = workspace();
    const r = await runTau(["run", "--model", "anything-goes", "-p", "hello"], { env: w.env, cwd: w.project });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(modelOf(0)).toBe("anything-goes");
  });
});

describe("prompts during the daemon's start", () => {
  it("[provider.start.prompt-waits-for-extensions] a prompt submitted before the providers have started waits for them and is answered", async () => {
    // The provider extension starts only once the test opens the gate: the prompt surely comes first.
    const gate = join(mkdtempSync(join(tmpdir(), "tau-gate-")), "open");
    cleanups.push(() => rmSync(dirname(gate), { recursive: true, force: true }));
    const yaml = JSON.stringify({
      model: "fake-model",
      extensions: [
        {
          name: "provider",
          kind: "provider",
          command: ["sh", "-c", `while [ ! -e '${gate}' ]; do sleep 0.02; done; exec '${process.execPath}' '${TAU_BIN}' ext provider`],
          config: { profile: "chat_completions", base_url: fake.baseUrl, models: [{ id: "fake-model" }] },
          startup_timeout_seconds: 30,
        },
      ],
    });
    const w = workspaceIn(cleanups, yaml);
    const { client } = await session({ ...w, env: { ...w.env, OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined } });
    const seen: Delivery[] = [];
    client.onDeliver((x) => seen.push(x));
    client.subscribe(["agent.prompt_submitted", "agent.prompt_failed", "provider.response_finished", "extension.ready"], ["*"]);
    const agent = (await client.request("ui.create_agent", {})).agent_id;
    fake.enqueue(textResponse("answered after the start"));
    client.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text: "hello early" });
    await waitFor(() => seen.some((d) => d.event.name === "agent.prompt_submitted"), "the daemon to take the prompt");
    expect(seen.some((d) => d.event.name === "extension.ready")).toBe(false);
    writeFileSync(gate, "");
    await waitFor(() => seen.some((d) => d.event.name === "provider.response_finished" || d.event.name === "agent.prompt_failed"), "the answer or a failure", 30_000);
    expect(seen.filter((d) => d.event.name === "agent.prompt_failed")).toEqual([]);
    expect(seen.find((d) => d.event.name === "provider.response_finished")?.event.data).toMatchObject({ agent_id: agent, text: "answered after the start" });
  });
});
