// `tau run` follows the prompt it submitted, not another one its agent receives meanwhile (a second
// UI attached to the run's daemon, another agent, a peer session): the run's output and its end are
// its own prompt's. Real launcher, daemon and provider extension against a loopback model server.
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { runTau } from "../../support/run-tau.js";
import { waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { textResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { SessionClient, type Delivery } from "../../../handwritten/cli/session-client.js";
import { listSessions } from "../../../handwritten/transport/index.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

describe("tau run and other prompts to its agent", () => {
  it("[run.output.own-prompt-only] a prompt another UI queues to the run's agent neither becomes the run's prompt nor reaches its output", async () => {
    const w = workspaceIn(cleanups);
    const env = { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-own", OPENAI_MODEL: "fake-model" };
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // The run's answer is held until the other prompt is queued behind it.
    fake.enqueue({ ...textResponse("the run's answer"), gate }, textResponse("the other answer"));
    const run = runTau(["run", "the run's prompt"], { env, cwd: w.project });
    await waitFor(() => fake.chatRequests.length === 1, "the run's request");
    const [row] = (await listSessions(join(w.home, "runtime"))).rows;
    expect(row).toBeDefined();
    const other = await SessionClient.attach(row!.socket, row!.session_id);
    cleanups.push(() => other.close());
    const seen: Delivery[] = [];
    other.onDeliver((d) => seen.push(d));
    other.subscribe(["session.agent_loaded", "agent.prompt_submitted"], ["*"]);
    await waitFor(() => seen.some((d) => d.event.name === "session.agent_loaded"), "the run's agent");
    const agent = (seen.find((d) => d.event.name === "session.agent_loaded")!.event.data as { agent_id: string }).agent_id;
    other.emit("ui.prompt_submit", { agent_id: agent, mode: "queue", text: "another prompt" });
    await waitFor(() => seen.filter((d) => d.event.name === "agent.prompt_submitted").length === 2, "the other prompt queued");
    release();
    const r = await run;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("the run's answer\n");
  });
});
