// The sandbox's configuration and states through a real daemon (SPEC-sandbox, GATE-sandbox): an
// untrusted project's file is ignored with a warning, a trusted one applies, an invalid value blocks
// with file:line, a missing bwrap blocks with the install hint and nothing runs unsandboxed.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { SandboxSession } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

/** A PATH folder with every program of /usr/bin but `without`. */
function pathWithout(without: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "tau-path-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  for (const name of readdirSync("/usr/bin")) if (!without.includes(name)) symlinkSync(join("/usr/bin", name), join(dir, name));
  return dir;
}

describe("sandbox configuration and states", () => {
  it("[sandbox.config.untrusted-project-ignored] an untrusted project's .tau/sandbox.yaml is ignored with a warning; a trusted one applies", async () => {
    const s = await SandboxSession.start(fake, cleanups, { projectYaml: "enabled: false\n" });
    const state = await s.settled();
    expect(state.state).toBe("active");
    expect(String(state.reason)).toContain(`${join(s.w.project, ".tau", "sandbox.yaml")} ignored: this project is not trusted`);
    const doctor = await s.command("doctor");
    expect(doctor.text).toContain("(project): skipped-untrusted");
    // Still sandboxed: a write outside the project is refused.
    const outside = join(s.w.home, "out.txt");
    const callId = await s.callShell(`echo x > ${outside}`);
    s.answer((await s.approval()).approval_id, "deny");
    await s.result(callId);
    expect(existsSync(outside)).toBe(false);

    // Trusting it (recorded by :sandbox trust) makes its file apply.
    const trust = await s.command("trust");
    expect(trust).toMatchObject({ ok: true });
    const trusted = await SandboxSession.start(fake, cleanups, { projectYaml: "enabled: false\n", trusted: true });
    expect(await trusted.settled()).toMatchObject({ state: "bypassed" });
    const r = await trusted.shell(`echo x > ${join(trusted.w.home, "out.txt")}`);
    expect(r.output).toContain("[sandbox: not in use");
    expect(existsSync(join(trusted.w.home, "out.txt"))).toBe(true);
  });

  it("[sandbox.config.invalid-blocks] an invalid value blocks the sandbox with file:line, and the call is refused", async () => {
    const s = await SandboxSession.start(fake, cleanups, { globalYaml: "network:\n  allowed_domains: [ok.example]\nmode: sometimes\n" });
    const state = await s.settled();
    expect(state.state).toBe("blocked");
    expect(String(state.reason)).toContain(`${join(s.w.home, "config", "sandbox.yaml")}:3: mode:`);
    const marker = join(s.w.project, "ran");
    const r = await s.shell(`touch ${marker}`);
    expect(r.outcome).toBe("error");
    expect(r.output).toContain("The sandbox is blocked, so the command was not run");
    expect(existsSync(marker)).toBe(false);
  });

  it("[sandbox.deps.missing-bwrap-blocks] a missing bwrap blocks with the install hint; nothing runs unsandboxed", async () => {
    const s = await SandboxSession.start(fake, cleanups, { env: { PATH: pathWithout(["bwrap"]) } });
    const state = await s.settled();
    expect(state.state).toBe("blocked");
    expect(String(state.reason)).toContain("bubblewrap (bwrap) not installed");
    expect(String(state.fix)).toContain("sudo apt-get install bubblewrap socat ripgrep");
    const marker = join(s.w.project, "ran");
    const r = await s.shell(`touch ${marker}`);
    expect(r.outcome).toBe("error");
    expect(r.output).toContain("sudo apt-get install bubblewrap socat ripgrep");
    expect(r.output).toContain("--no-sandbox");
    expect(existsSync(marker)).toBe(false);
  });

  it("[sandbox.state.no-sandbox-bypassed] --no-sandbox bypasses the sandbox and the model is told once", async () => {
    const s = await SandboxSession.start(fake, cleanups, { daemonArgs: ["--harness-config", "sandbox.enabled=false"] });
    expect(await s.settled()).toMatchObject({ state: "bypassed" });
    mkdirSync(join(s.w.home, "free"));
    const first = await s.shell(`echo x > ${join(s.w.home, "free", "a")}`);
    expect(first.output).toBe("[sandbox: not in use (the user started tau without it) — commands run with the user's full rights]\n(no output)\n[exit code 0]");
    const second = await s.shell("echo again");
    expect(second.output).toBe("again\n[exit code 0]");
  });

  it("[sandbox.state.model-told] a change of state reaches the model as a hidden message at its next round, never as a shell-result note", async () => {
    const s = await SandboxSession.start(fake, cleanups);
    expect(await s.settled()).toMatchObject({ state: "active" });
    const userTexts = () => (fake.chatRequests.at(-1)?.body as { messages: Array<{ role: string; content?: unknown }> }).messages.filter((m) => m.role === "user").map((m) => String(m.content));
    expect((await s.shell("echo before")).output).toBe("before\n[exit code 0]");
    expect(userTexts().some((t) => t.startsWith("[sandbox]"))).toBe(false);
    expect((await s.command("off")).ok).toBe(true);
    await s.next("sandbox.state_reported", (d) => d.state === "suspended");
    const off = await s.shell("echo during");
    expect(off.output).toBe("during\n[exit code 0]"); // no note in the result
    const told = userTexts().filter((t) => t.startsWith("[sandbox]"));
    expect(told).toEqual([expect.stringContaining("The user suspended the sandbox")]);
    // Told once: the next prompt carries no new message.
    await s.shell("echo again");
    expect(userTexts().filter((t) => t.startsWith("[sandbox]"))).toHaveLength(1);
    expect((await s.command("on")).ok).toBe(true);
    await s.next("sandbox.state_reported", (d) => d.state === "active");
    await s.shell("echo after");
    expect(userTexts().filter((t) => t.startsWith("[sandbox]")).at(-1)).toContain("run in the sandbox again");
  });
});
