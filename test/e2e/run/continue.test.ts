// `tau run --continue` and `--resume ID`: a headless run continues a saved session's agent, with
// the conversation so far, through the real launcher, daemon and provider extension against a
// loopback model server; and refuses, with its code and nothing removed, what it cannot continue.
import { describe, expect, it } from "vitest";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { runTau } from "../../support/run-tau.js";
import { isAlive, startDaemon } from "../../support/daemon.js";
import { processTree, useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";
import { exitCodeOf } from "../../../handwritten/cli/errors.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

type Msg = { role: string; content?: unknown };
const messages = (i: number) => (fake.chatRequests[i]?.body as { messages: Msg[] }).messages;

describe("tau run continuing a saved session", () => {
  it("[run.continue.saved-session] --continue and --resume send the prompt to the saved session's agent with its history; no new session is made", async () => {
    const w = workspaceIn(cleanups);
    const env = { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-x", OPENAI_MODEL: "fake-model" };
    fake.enqueue(textResponse("noted: kiwi"), textResponse("the word was kiwi"), textResponse("still kiwi"));
    const first = await runTau(["run", "remember the word kiwi"], { env, cwd: w.project });
    expect(first.code, first.stderr).toBe(0);
    const sessions = () => readdirSync(join(w.home, "state", "sessions")).filter((n) => n.startsWith("s-"));
    expect(sessions()).toHaveLength(1);
    const [sessionId] = sessions() as [string];
    const second = await runTau(["run", "--continue", "which word?"], { env, cwd: w.project });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe("the word was kiwi\n");
    expect(messages(1).filter((m) => m.role !== "system").map((m) => [m.role, String(m.content)])).toEqual([
      ["user", "<user>\nremember the word kiwi\n</user>"],
      ["assistant", "noted: kiwi"],
      ["user", "<user>\nwhich word?\n</user>"],
    ]);
    const third = await runTau(["run", "--resume", sessionId.slice(0, 8), "-p", "and now?"], { env, cwd: w.home });
    expect(third.code, third.stderr).toBe(0);
    expect(messages(2).filter((m) => m.role === "user")).toHaveLength(3);
    expect(sessions()).toEqual([sessionId]);
    // The same agent throughout: one agent folder.
    expect(readdirSync(join(w.home, "state", "agents"))).toHaveLength(1);
  });

  it("[run.continue.refusals] an unknown or ambiguous session, none for this folder, a running one and --ephemeral are refused with their codes; nothing is removed", async () => {
    const w = workspaceIn(cleanups);
    const env = { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-x", OPENAI_MODEL: "fake-model" };
    fake.enqueue(textResponse("ok"));
    expect((await runTau(["run", "hello"], { env, cwd: w.project })).code).toBe(0);
    const [sessionId] = readdirSync(join(w.home, "state", "sessions")).filter((n) => n.startsWith("s-")) as [string];
    const unknown = await runTau(["run", "--resume", "s-nosuch", "x"], { env, cwd: w.project });
    expect([unknown.code, unknown.stdout]).toEqual([exitCodeOf("TAU-E0118"), ""]);
    expect(unknown.stderr).toContain('no saved session matches "s-nosuch"');
    const elsewhere = join(w.home, "elsewhere");
    mkdirSync(elsewhere);
    const none = await runTau(["run", "--continue", "x"], { env, cwd: elsewhere });
    expect(none.code).toBe(exitCodeOf("TAU-E0118"));
    expect(none.stderr).toContain("no saved session of this folder");
    const both = await runTau(["run", "--continue", "--ephemeral", "x"], { env, cwd: w.project });
    expect(both.code).toBe(exitCodeOf("TAU-E0101"));
    expect(both.stderr).toContain("--ephemeral keeps no session");
    const d = await startDaemon(env, ["--resume", sessionId, "--project-root", w.project]);
    cleanups.push(() => {
      for (const pid of processTree(d.pid)) if (isAlive(pid)) process.kill(pid, "SIGKILL");
    });
    const running = await runTau(["run", "--resume", sessionId, "x"], { env, cwd: w.project });
    expect(running.code).toBe(exitCodeOf("TAU-E0308"));
    expect(running.stderr).toContain(`tau attach ${sessionId}`);
    expect(fake.chatRequests).toHaveLength(1); // nothing was sent for any refused run
    expect(readdirSync(join(w.home, "state", "sessions")).filter((n) => n.startsWith("s-"))).toEqual([sessionId]);
  });
});
