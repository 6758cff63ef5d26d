// What `tau run` sends a chat-completions server across rounds and runs (issue 40, item 12):
// reasoning goes back where the server streamed it as reasoning_content, whatever the host or model
// is called; the server's finish reason is kept as sent; the model listing is kept across runs.
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runTau } from "../../support/run-tau.js";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, SSE_DONE, completionChunk, sseEvent, textResponse, toolCallResponse } from "../../support/fake-openai.js";
import { replayJournal, validateJournalRecord, type JournalRecord } from "../../../handwritten/store/index.js";
import { MODEL_LISTING_TTL_MS, listingCacheDir } from "../../../handwritten/extensions/provider/index.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));
const cleanups = useCleanups();

type Sent = { messages: Array<Record<string, unknown>> };

function finishedResponses(home: string): Array<Record<string, unknown>> {
  const agents = join(home, "state", "agents");
  return readdirSync(agents).flatMap((id) =>
    replayJournal<JournalRecord>(join(agents, id, "events.cbor"), { validate: validateJournalRecord })
      .records.filter((r) => r.event.name === "provider.response_finished")
      .map((r) => r.event.data as Record<string, unknown>),
  );
}

describe("tau run against a chat-completions server", () => {
  it("[run.provider.reasoning-by-stream] a server that streamed reasoning_content gets it back on the next round, though neither host nor model names it; the finish reason is kept as sent", async () => {
    const { env, home, project } = workspaceIn(cleanups);
    const openai = { ...env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "k", OPENAI_MODEL: "some-thinker" };
    fake.enqueue(
      {
        chunks: [
          sseEvent(completionChunk({ role: "assistant", reasoning_content: "I should look " })),
          sseEvent(completionChunk({ reasoning_content: "at the folder." })),
          sseEvent(completionChunk({ tool_calls: [{ index: 0, id: "call_ls_1", type: "function", function: { name: "ls", arguments: '{"path":"."}' } }] }, { finishReason: "tool_calls" })),
          SSE_DONE,
        ],
      },
      textResponse("Nothing much."),
    );
    const before = fake.chatRequests.length;
    const r = await runTau(["run", "-p", "what is here?"], { env: openai, cwd: project });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("Nothing much.\n");
    const second = fake.chatRequests[before + 1]!.body as Sent;
    expect(second.messages.filter((m) => m.role === "assistant")).toEqual([
      { role: "assistant", content: null, reasoning_content: "I should look at the folder.", tool_calls: [{ id: "call_ls_1", type: "function", function: { name: "ls", arguments: '{"path":"."}' } }] },
    ]);
    const [first, last] = finishedResponses(home);
    expect(first).toMatchObject({ finish_reason: "tool_calls", server_finish_reason: "tool_calls", reasoning_field: "reasoning_content" });
    expect(last).toMatchObject({ finish_reason: "stop", server_finish_reason: "stop" });
    expect(last).not.toHaveProperty("reasoning_field");
    // A server that streamed no reasoning_content gets none back.
    fake.enqueue(toolCallResponse([{ id: "call_ls_2", name: "ls", arguments: '{"path":"."}' }]), textResponse("Still nothing."));
    const at = fake.chatRequests.length;
    expect((await runTau(["run", "-p", "and now?"], { env: openai, cwd: project })).code).toBe(0);
    for (const m of (fake.chatRequests[at + 1]!.body as Sent).messages) expect(m).not.toHaveProperty("reasoning_content");
  });

  it("[run.provider.listing-cached] the model listing is kept across runs for its TTL: a second 2-round run makes 2 requests, not 3; a broken or stale kept listing is asked for again", async () => {
    const { env, home, project } = workspaceIn(cleanups);
    const openai = { ...env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "k", OPENAI_MODEL: "fake-model" };
    fake.setModels(["fake-model", "other-model"]);
    const job = async () => {
      fake.enqueue(toolCallResponse([{ id: `call_${fake.requests.length}`, name: "ls", arguments: '{"path":"."}' }]), textResponse("Listed."));
      const before = { all: fake.requests.length, models: fake.modelRequests.length };
      const r = await runTau(["run", "-p", "list"], { env: openai, cwd: project });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe("Listed.\n");
      return { requests: fake.requests.length - before.all, listings: fake.modelRequests.length - before.models };
    };
    expect(await job()).toEqual({ requests: 3, listings: 1 });
    expect(await job()).toEqual({ requests: 2, listings: 0 });
    // Kept in the provider instance's state folder.
    const instances = readdirSync(join(home, "state", "ext")).filter((i) => existsSync(listingCacheDir(join(home, "state", "ext", i))));
    expect(instances).toHaveLength(1);
    const dir = listingCacheDir(join(home, "state", "ext", instances[0] as string));
    const [file] = readdirSync(dir);
    expect(file).toMatch(/^[0-9a-f]{32}\.json$/);
    const path = join(dir, file as string);
    // Garbage, a listing that names no model, and one older than the TTL: each is asked for again.
    const kept = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    for (const broken of ["{not json", JSON.stringify({ ...kept, body: '{"data":[]}' }), JSON.stringify({ ...kept, fetched_at: Date.now() - MODEL_LISTING_TTL_MS - 1 })]) {
      writeFileSync(path, broken);
      expect(await job(), broken.slice(0, 40)).toEqual({ requests: 3, listings: 1 });
    }
    expect(await job()).toEqual({ requests: 2, listings: 0 });
    // An ephemeral run keeps nothing, so it neither reads nor writes a kept listing.
    const fresh = workspaceIn(cleanups);
    for (let i = 0; i < 2; i++) {
      fake.enqueue(textResponse("Once."));
      const before = fake.modelRequests.length;
      const r = await runTau(["run", "--ephemeral", "-p", "once"], { env: { ...openai, TAU_HOME: fresh.home }, cwd: fresh.project });
      expect(r.code, r.stderr).toBe(0);
      expect(fake.modelRequests.length - before).toBe(1);
    }
    expect(existsSync(join(fresh.home, "state", "ext"))).toBe(false);
  });
});
