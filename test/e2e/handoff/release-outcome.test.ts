// A released handoff's recovery file goes only once the turn that received the deferred prompts
// completed (SPEC-handoff "Recovery", "Release"): a receiving turn that fails keeps the file, with a
// warning naming it, and `:handoff recover resume` then sends nothing again and deletes it; one
// that completes deletes it. Real daemon, the handoff extension, the loopback model.
import { describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { errorResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { attach, command, createAgent, daemon, delivered, handoffWorkspace, messages, recoveryPath, scriptHandoff } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

describe("the release's receiving turn", () => {
  it("[handoff.release.failed-turn-keeps-file] a cancelled handoff's prompt whose receiving turn fails keeps the recovery file; resume sends nothing again and deletes it; a completed receiving turn deletes it", async () => {
    const w = handoffWorkspace(fake, cleanups);
    let open!: () => void;
    const first = new Promise<void>((r) => (open = r));
    let openSecond!: () => void;
    const second = new Promise<void>((r) => (openSecond = r));
    cleanups.push(() => open(), () => openSecond());
    let retrievals = 0;
    scriptHandoff(fake, { afterTemplate: () => (retrievals++ === 0 ? first : second), other: (_r, text) => (text.includes("release me: fail") ? errorResponse(400, { message: "refused by the test" }) : undefined) });
    const d = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c = await attach(d, cleanups);
    const agentId = await createAgent(c);
    const file = recoveryPath(w, d.session_id);
    const sentOf = (text: string) => fake.chatRequests.filter((r) => messages(r).some((m) => m.role === "user" && m.content === text)).length;

    expect((await command(c, agentId, "h1", "start")).ok).toBe(true);
    await delivered(c, "handoff.state_reported", (x) => x.phase === "writing");
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "release me: fail" });
    await delivered(c, "handoff.state_reported", (x) => x.deferred === 1);
    expect((await command(c, agentId, "x1", "cancel")).ok).toBe(true);
    open();
    const warning = await delivered(c, "extension.notice", (x) => String(x.text).includes("the recovery file"), 60_000);
    expect(String(warning.text)).toContain("ended failed");
    expect(String(warning.text)).toContain(file);
    expect(existsSync(file)).toBe(true);
    const shown = await command(c, agentId, "r1", "recover");
    expect(shown.text).toContain("phase releasing, 1 deferred prompt(s)");
    const resumed = await command(c, agentId, "r2", "recover", "resume");
    expect(resumed.text).toContain("0 prompt(s) sent");
    expect(existsSync(file)).toBe(false);
    expect(sentOf("release me: fail")).toBe(1);

    // A second handoff, cancelled, whose prompt's turn completes: the file is deleted.
    expect((await command(c, agentId, "h2", "start")).ok).toBe(true);
    await delivered(c, "handoff.state_reported", (x) => x.phase === "writing" && x.deferred === 0);
    c.emit("ui.prompt_submit", { agent_id: agentId, mode: "queue", text: "release me: fine" });
    await delivered(c, "handoff.state_reported", (x) => x.deferred === 1);
    expect((await command(c, agentId, "x2", "cancel")).ok).toBe(true);
    // The model's turn goes on (an extension cancels no turn): it writes the reserved file, its
    // Finish is refused, and only once that turn ended is the reservation removed.
    openSecond();
    await waitFor(() => sentOf("release me: fine") === 1 && !existsSync(file), "the completed turn and the file's removal", 60_000);
    expect(existsSync(join(w.project, ".tau", `handoff_${d.session_id}.md`))).toBe(false);
  }, 120_000);
});
