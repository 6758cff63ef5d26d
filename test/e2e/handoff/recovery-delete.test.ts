// A recovery file that cannot be deleted after a successful cutover (SPEC-handoff, "Assembly and
// cutover"): the handoff stands and the failure is reported as a warning notice. Through real
// daemons, the real handoff extension and the loopback model. Tests may run as root, whom folder
// permissions do not stop, so the file is made undeletable by putting a non-empty folder in its
// place (a file removal refuses a folder, for root too) while the cutover is held: the replacement
// session's start waits on a gate file (the test extension's `ready_gate`), so the swap happens
// after the extension's last write of the file and before its removal.
import { describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { attach, command, createAgent, daemon, delivered, handoffWorkspace, kill, runningSession, scriptHandoff } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

describe("the handoff's recovery file", () => {
  it("[handoff.recovery.delete-failure-warned] a recovery file that cannot be deleted after the cutover is reported as a warning notice naming it, and the handoff stands", async () => {
    const base = handoffWorkspace(fake, cleanups);
    const gate = join(base.home, "replacement-gate");
    // The same configuration plus a test extension whose start waits while the gate file exists.
    const yaml = JSON.parse(readFileSync(join(base.home, "config", "harness.yaml"), "utf8")) as { extensions: unknown[] };
    yaml.extensions.push({ name: "gate", kind: "tool", command: ["tau", "ext", "test-dummy"], config: { tools: ["echo"], ready_gate: gate }, startup_timeout_seconds: 60 });
    writeFileSync(join(base.home, "config", "harness.yaml"), JSON.stringify(yaml));
    const w = base;
    scriptHandoff(fake);
    const d = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c = await attach(d, cleanups);
    const agentId = await createAgent(c);
    // From here on a new daemon (the replacement) waits at its start until the gate is removed.
    writeFileSync(gate, "");
    cleanups.push(() => rmSync(gate, { force: true }));

    expect((await command(c, agentId, "h1", "start")).ok).toBe(true);
    // Phase cutover: the file's last write is done; the replacement is being started.
    await delivered(c, "handoff.state_reported", (x) => x.phase === "cutover");
    const recovery = join(w.home, "config", "handoff", "recovery", `recovery-${d.session_id}.md`);
    expect(readFileSync(recovery, "utf8")).toContain("phase: cutover");
    rmSync(recovery);
    mkdirSync(recovery);
    writeFileSync(join(recovery, "keep"), "in the way");
    expect(c.inbox.some((m) => m.message === "deliver" && m.payload.event.name === "session.handed_off")).toBe(false);
    rmSync(gate);

    const handedOff = await delivered(c, "session.handed_off");
    const successor = String(handedOff.successor_session_id);
    // The extension reports the failed delete before the handoff's end (phase idle).
    await delivered(c, "handoff.state_reported", (x) => x.phase === "idle");
    const warnings = c.deliveries().filter((x) => x.name === "extension.notice" && String(x.data.text).includes("could not be deleted"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.data.level).toBe("warning");
    expect(String(warnings[0]!.data.text)).toContain(`the handoff's recovery file ${recovery} could not be deleted`);
    // The handoff stands: the replacement runs; what was in the way is still there.
    let row: Awaited<ReturnType<typeof runningSession>>;
    await waitFor(async () => (row = await runningSession(w.home, successor)) !== undefined, "the replacement daemon", 30_000);
    cleanups.push(() => kill(row!.pid));
    expect(statSync(recovery).isDirectory()).toBe(true);
    expect(existsSync(join(recovery, "keep"))).toBe(true);
  }, 120_000);
});
