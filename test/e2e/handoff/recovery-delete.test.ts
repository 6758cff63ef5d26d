// A recovery file that cannot be deleted after a successful handoff (SPEC-handoff, "Receiving"): the
// replacement's handoff extension deletes it once its first turn completed; a failure is reported
// there as a warning notice and the handoff stands. Through real daemons, the real handoff extension
// and the loopback model. Tests may run as root, whom folder permissions do not stop, so the file is
// made undeletable by putting a non-empty folder in its place (a file removal refuses a folder, for
// root too) while the replacement's first turn is held.
import { describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../../support/daemon.js";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { textResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { attach, command, createAgent, daemon, delivered, handoffWorkspace, kill, runningSession, scriptHandoff } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

describe("the handoff's recovery file", () => {
  it("[handoff.recovery.delete-failure-warned] a recovery file that cannot be deleted once the replacement's first turn completed is reported there as a warning notice naming it, and the handoff stands", async () => {
    const w = handoffWorkspace(fake, cleanups);
    let receive!: () => void;
    const received = new Promise<void>((r) => (receive = r));
    cleanups.push(() => receive());
    scriptHandoff(fake, { firstTurn: () => ({ ...textResponse("continuing"), gate: received }) });
    const d = await daemon(w.env, ["--project-root", w.project], cleanups);
    const c = await attach(d, cleanups);
    const agentId = await createAgent(c);
    expect((await command(c, agentId, "h1", "start")).ok).toBe(true);
    const successor = String((await delivered(c, "session.handed_off")).successor_session_id);
    let row: Awaited<ReturnType<typeof runningSession>>;
    await waitFor(async () => (row = await runningSession(w.home, successor)) !== undefined, "the replacement daemon", 30_000);
    cleanups.push(() => kill(row!.pid));
    const r = await attach(row!, cleanups);
    // Recorded in the source (the file says so); kept until the replacement's first turn completes. Made undeletable.
    const recovery = join(w.home, "config", "handoff", "recovery", `recovery-${d.session_id}.md`);
    await waitFor(() => readFileSync(recovery, "utf8").includes("phase: handed_off"), "the handoff marked recorded", 30_000);
    rmSync(recovery);
    mkdirSync(recovery);
    writeFileSync(join(recovery, "keep"), "in the way");
    receive();

    const warning = await delivered(r, "extension.notice", (x) => String(x.text).includes("could not be deleted"), 30_000);
    expect(warning.level).toBe("warning");
    expect(String(warning.text)).toContain(`the handoff's recovery file ${recovery} could not be deleted`);
    // The handoff stands; what was in the way is still there, exactly.
    expect((await runningSession(w.home, successor))?.pid).toBe(row!.pid);
    expect(statSync(recovery).isDirectory()).toBe(true);
    expect(existsSync(join(recovery, "keep"))).toBe(true);
  }, 120_000);
});
