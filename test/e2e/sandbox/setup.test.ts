// When the sandbox is set up (SPEC-sandbox, "States"): from the extension's start, beside the first
// model request, not at the first `shell` call — through a real daemon and real bubblewrap.
import { describe, expect, it } from "vitest";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { SandboxSession } from "./support.js";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

describe("the sandbox's set-up", () => {
  it("[sandbox.setup.ready-at-first-call] starts with the extension: with no call made the sandbox becomes active with its wrap built, and the first command runs on that wrap", async () => {
    const s = await SandboxSession.start(fake, cleanups);
    // No call has been made: the set-up ran on its own, the wrap for the policy included.
    expect(await s.settled()).toMatchObject({ state: "active" });
    expect(s.client.deliveries().some((d) => d.name === "tool.request")).toBe(false);
    expect((await s.command("doctor")).text).toContain("sandbox wraps: 1 built, 0 reused");
    // The first command builds nothing: it reuses the wrap built ahead.
    expect((await s.shell("echo first")).output).toBe("first\n[exit code 0]");
    expect((await s.command("doctor")).text).toContain("sandbox wraps: 1 built, 1 reused");
  });
});
