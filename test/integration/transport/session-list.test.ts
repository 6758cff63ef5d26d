// `tau session list` against real daemon stand-ins in separate processes, through the real binary.
import * as fs from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  ensureRuntimeDir,
  listSessions,
  mintInstance,
  scanRuntime,
  writePairMetadata,
} from "../../../handwritten/transport/index.js";
import { cleanupAll, leaveStaleSocket, snapshotDir, startFakeDaemon, tempHome } from "../../fixtures/transport/helpers.js";
import { runTau } from "../../support/run-tau.js";

afterAll(cleanupAll);

interface JsonRow {
  session_id: string;
  project_root: string;
  pid: number;
  socket: string;
}

describe("tau session list", () => {
  it("[discovery.list.two-daemons] shows two concurrently running daemons with their session ids and project roots, escaped in line output", async () => {
    const home = tempHome();
    const runtime = join(home, "runtime");
    const hostile = "/projects/\u001b[31mred\nsecond line\u202e\u0007\ttab\\";
    const minted = mintInstance();
    const [a, b] = await Promise.all([
      // One launched with a launcher-minted instance, one direct (minting its own).
      startFakeDaemon({ runtimeDir: runtime, sessionId: "sess-alpha", projectRoot: "/projects/alpha", instance: minted }),
      startFakeDaemon({ runtimeDir: runtime, sessionId: "sess-beta", projectRoot: hostile }),
    ]);
    expect(a.socket).toBe(join(runtime, `${a.pid}-${minted}.sock`));
    expect(b.socket).toMatch(new RegExp(`/${b.pid}-[0-9a-f]{16}\\.sock$`));
    expect(fs.lstatSync(runtime).mode & 0o777).toBe(0o700);

    const json = await runTau(["session", "list", "--json"], { env: { TAU_HOME: home } });
    expect(json.code, json.stderr).toBe(0);
    const rows = JSON.parse(json.stdout) as JsonRow[];
    expect(rows).toEqual([
      { session_id: "sess-alpha", project_root: "/projects/alpha", pid: a.pid, socket: a.socket },
      { session_id: "sess-beta", project_root: hostile, pid: b.pid, socket: b.socket },
    ]);
    // JSON string escaping: no raw control or bidi character reaches the output.
    expect(json.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(json.stdout).toContain("\\u001b[31mred\\nsecond line\\u202e\\u0007\\ttab\\\\");

    const lines = await runTau(["session", "list"], { env: { TAU_HOME: home } });
    expect(lines.code, lines.stderr).toBe(0);
    expect(lines.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    const out = lines.stdout.trimEnd().split("\n");
    expect(out).toHaveLength(3);
    expect(out[0]).toMatch(/^SESSION\s+PID\s+PROJECT ROOT$/);
    expect(out[1]).toMatch(new RegExp(`^sess-alpha\\s+${a.pid}\\s+/projects/alpha$`));
    expect(out[2]).toContain(`${b.pid}  /projects/\\x1b[31mred\\nsecond line\\u202e\\x07\\ttab\\\\`);

    // Each daemon removes its own pair on a handled exit; then nothing is listed.
    await Promise.all([a.stop(), b.stop()]);
    expect(fs.readdirSync(runtime)).toEqual([]);
    const none = await runTau(["session", "list"], { env: { TAU_HOME: home } });
    expect(none.code).toBe(0);
    expect(none.stdout.trim()).toBe("No running tau daemons.");
    const noneJson = await runTau(["session", "list", "--json"], { env: { TAU_HOME: home } });
    expect(JSON.parse(noneJson.stdout)).toEqual([]);
  });

  it("[discovery.scan.never-unlinks] leaves a stale pair, a foreign or unparseable pair and a random file byte-identical", async () => {
    const home = tempHome();
    const runtime = join(home, "runtime");
    ensureRuntimeDir(runtime);
    // A stale pair: its socket outlived a SIGKILLed process, its metadata names that dead pid.
    const staleInstance = mintInstance();
    const stale = await leaveStaleSocket(runtime, staleInstance);
    writePairMetadata(runtime, { pid: stale.pid, instance: staleInstance, created_at: "2024-01-01T00:00:00.000Z", version: "0.0.1" });
    // Foreign and unparseable pairs, and unrelated files.
    fs.writeFileSync(join(runtime, "31-0123456789ABCDEF.sock"), "not ours: uppercase stem");
    fs.writeFileSync(join(runtime, "31-0123456789ABCDEF.json"), "{broken");
    fs.writeFileSync(join(runtime, `32-${mintInstance()}.sock`), "a regular file with a valid stem");
    fs.writeFileSync(join(runtime, `32-${mintInstance()}.json`), JSON.stringify({ pid: "x" }));
    fs.writeFileSync(join(runtime, "notes.txt"), "random bytes \u0000\u00ff");
    fs.writeFileSync(join(runtime, `.33-${mintInstance()}.0badc0de.tmp`), "a crashed writer's temp file");
    // And one live daemon, so the listing has something to show.
    const live = await startFakeDaemon({ runtimeDir: runtime, sessionId: "sess-live", projectRoot: "/live" });
    const before = snapshotDir(runtime);
    expect(before.find((e) => e.name === `${stale.pid}-${staleInstance}.sock`)?.type).toBe("socket");

    await scanRuntime(runtime);
    expect(snapshotDir(runtime)).toEqual(before);
    const listing = await listSessions(runtime, { deadlineMs: 1000 });
    expect(listing.rows.map((r) => r.session_id)).toEqual(["sess-live"]);
    expect(listing.outcomes.find((o) => o.socket === stale.socket)).toMatchObject({ kind: "unreachable", failure: "refused" });
    expect(snapshotDir(runtime)).toEqual(before);

    for (const args of [["session", "list"], ["session", "list", "--json"]]) {
      const run = await runTau(args, { env: { TAU_HOME: home } });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain("sess-live");
      expect(run.stdout).not.toContain(staleInstance);
      expect(snapshotDir(runtime)).toEqual(before);
    }
    await live.stop();
    // Only the live daemon's own pair went away.
    expect(snapshotDir(runtime)).toEqual(before.filter((e) => !e.name.startsWith(`${live.pid}-`)));
  });

  it("[discovery.probe.deadline] a daemon process that accepts and never answers does not make the listing hang", async () => {
    const home = tempHome();
    const runtime = join(home, "runtime");
    const [silent, answering] = await Promise.all([
      startFakeDaemon({ runtimeDir: runtime, sessionId: "sess-silent", projectRoot: "/silent", mode: "silent" }),
      startFakeDaemon({ runtimeDir: runtime, sessionId: "sess-answering", projectRoot: "/answering" }),
    ]);
    const run = await runTau(["session", "list", "--json"], { env: { TAU_HOME: home } });
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as JsonRow[]).map((r) => r.session_id)).toEqual(["sess-answering"]);
    // The silent daemon is still running and still has its pair: nothing was removed.
    expect(silent.proc.exitCode).toBeNull();
    expect(fs.existsSync(silent.socket)).toBe(true);
    await Promise.all([silent.stop(), answering.stop()]);
  });

  it("fails closed with a clear message when the runtime directory has the wrong mode", async () => {
    const home = tempHome();
    const runtime = join(home, "runtime");
    fs.mkdirSync(runtime, { mode: 0o700 });
    fs.chmodSync(runtime, 0o777);
    const run = await runTau(["session", "list"], { env: { TAU_HOME: home } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`tau: runtime directory "${runtime}" has mode 0777, expected 0700; refusing to use it`);
    expect(run.stdout).toBe("");
    expect(fs.lstatSync(runtime).mode & 0o777).toBe(0o777);
  });
});
