// The wrap kept between starts (SPEC-sandbox, "The wrap kept between starts"): a later start in the
// same tau home and project runs its commands with the wrap an earlier one built, without loading
// the runtime, only while the policy, the disk and the installation are the same; the runtime starts
// at the first connection. Through real daemons, one after the other, and real bubblewrap.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { commandLine, processTree, useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import { waitFor } from "../../support/wait.js";
import { SandboxSession, useLoopbackHost } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();
const host = useLoopbackHost();

const fetchCommand = (port: number) => `curl -sS -f --noproxy '' -m 20 http://127.0.0.1:${port}/`;

/** The kept wraps' files of a tau home (one per project). */
function keptFiles(home: string): string[] {
  const dir = join(home, "state", "sandbox-probes");
  return readdirSync(dir)
    .filter((f) => /^wrap-[0-9a-f]{16}\.json$/.test(f))
    .map((f) => join(dir, f));
}

/** Whether one of the runtime's bridges (socat listening on a Unix socket) runs below the daemon. */
function runtimeBridgeRunning(s: SandboxSession): boolean {
  return processTree(s.daemon.pid).some((p) => /socat .*UNIX-LISTEN:/.test(commandLine(p)));
}

/** A first session that ran one command (its wrap then kept), ended. */
async function firstStart(o: Parameters<typeof SandboxSession.active>[2] = {}): Promise<SandboxSession> {
  const s = await SandboxSession.active(fake, cleanups, o);
  expect((await s.shell("echo first")).output).toBe("first\n[exit code 0]");
  expect(keptFiles(s.w.home)).toHaveLength(1);
  s.end();
  return s;
}

describe("the wrap kept between starts", () => {
  it("[sandbox.kept.second-start] a later start runs its commands sandboxed with the kept wrap, without loading the runtime", async () => {
    const first = await firstStart();
    const s = await SandboxSession.active(fake, cleanups, { workspace: first.w });
    // Sandboxed all the same: another network namespace than the host's, and a write outside the project refused.
    const ns = await s.shell("readlink /proc/self/ns/net");
    expect(ns.output).toMatch(/^net:\[\d+\]/);
    expect(ns.output).not.toContain(readlinkSync("/proc/self/ns/net"));
    const outside = s.outsideDir();
    const callId = await s.callShell(`echo x > ${outside}/f`);
    await s.denyWrite(callId, outside);
    expect(readdirSync(outside)).toEqual([]);
    // No runtime: none of its bridges runs, until the doctor checks the dependencies.
    expect(runtimeBridgeRunning(s)).toBe(false);
    const doctor = (await s.command("doctor")).text;
    expect(doctor).toContain("sandbox wraps: 0 built, 2 reused (the first kept from an earlier start)");
    expect(doctor).toContain("dependencies: bwrap, socat, rg found");
    expect(runtimeBridgeRunning(s)).toBe(true);
  });

  it("[sandbox.kept.disk-changed] a deny-read folder that appeared since the wrap was kept is protected: the wrap is built again", async () => {
    const globalYaml = "filesystem:\n  deny_read: [$TAU_HOME/later]\n";
    const first = await firstStart({ globalYaml });
    mkdirSync(join(first.w.home, "later"));
    writeFileSync(join(first.w.home, "later", "secret"), "the-secret-text\n");
    const s = await SandboxSession.active(fake, cleanups, { workspace: first.w, globalYaml });
    // Its error left out: a denial would be asked about; the content is what matters.
    const read = await s.shell(`cat "$TAU_HOME/later/secret" 2>/dev/null; echo "rc=$?"`);
    expect(read.output).not.toContain("the-secret-text");
    expect(read.output).toMatch(/rc=[1-9]/);
    expect((await s.command("doctor")).text).toMatch(/sandbox wraps: 1 built, 1 reused\n/);
  });

  it("[sandbox.kept.policy-changed] a rule added to sandbox.yaml since the wrap was kept holds: the wrap is built again", async () => {
    const first = await firstStart();
    mkdirSync(join(first.w.home, "private"));
    writeFileSync(join(first.w.home, "private", "secret"), "the-private-text\n");
    const s = await SandboxSession.active(fake, cleanups, { workspace: first.w, globalYaml: "filesystem:\n  deny_read: [$TAU_HOME/private]\n" });
    const read = await s.shell(`cat "$TAU_HOME/private/secret" 2>/dev/null; echo "rc=$?"`);
    expect(read.output).not.toContain("the-private-text");
    expect(read.output).toMatch(/rc=[1-9]/);
    expect((await s.command("doctor")).text).toMatch(/sandbox wraps: 1 built, 1 reused\n/);
  });

  it("[sandbox.kept.network-on-demand] the first connection starts the runtime: an allowed host is reached through this start's proxy", async () => {
    const port = await host.start();
    const globalYaml = "network:\n  allowed_domains: [127.0.0.1]\n";
    const first = await firstStart({ globalYaml });
    const s = await SandboxSession.active(fake, cleanups, { workspace: first.w, globalYaml });
    expect(runtimeBridgeRunning(s)).toBe(false);
    expect((await s.shell(fetchCommand(port))).output).toContain("hello from the host");
    expect(host.hits).toBe(1);
    // The connection started the runtime; the wrap stays the kept one: the runtime built none.
    expect(runtimeBridgeRunning(s)).toBe(true);
    expect((await s.command("doctor")).text).toContain("sandbox wraps: 0 built, 1 reused (the first kept from an earlier start)");
  });

  it("[sandbox.kept.no-credential-on-disk] the kept wrap holds no proxy credential, neither the start's that kept it nor a later one's", async () => {
    const credential = async (s: SandboxSession): Promise<string> => {
      const out = (await s.shell(`printf '%s\\n' "$HTTP_PROXY"`)).output;
      const m = /^http:\/\/[^:]+:([0-9a-f]{32})@localhost:3128$/m.exec(out);
      expect(m, out).not.toBeNull();
      return (m as RegExpExecArray)[1] as string;
    };
    const first = await SandboxSession.active(fake, cleanups);
    const one = await credential(first);
    first.end();
    const s = await SandboxSession.active(fake, cleanups, { workspace: first.w });
    const two = await credential(s);
    expect(two).not.toBe(one);
    expect((await s.command("doctor")).text).toContain("(the first kept from an earlier start)");
    const [file] = keptFiles(s.w.home);
    const text = readFileSync(file as string, "utf8");
    expect(text).toContain("localhost:3128");
    expect(text).not.toContain(one);
    expect(text).not.toContain(two);
  });

  it("[sandbox.kept.sweeps-leftovers] a start that takes the kept wrap still removes the sockets a killed predecessor left", async () => {
    const first = await firstStart();
    // A socket file of the sandbox's folder whose owner is gone (a predecessor killed with every tau process).
    const dead = Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout);
    const left = join(first.w.home, "runtime", "sandbox", `${dead}.sock`);
    const r = spawnSync(process.execPath, ["-e", `require("node:net").createServer().listen(${JSON.stringify(left)}, () => process.kill(process.pid, "SIGKILL"))`]);
    expect(r.signal).toBe("SIGKILL");
    expect(existsSync(left)).toBe(true);
    const s = await SandboxSession.active(fake, cleanups, { workspace: first.w });
    expect((await s.command("doctor")).text).toContain("(the first kept from an earlier start)");
    await waitFor(() => !existsSync(left), "the left socket to be swept");
  });

  it("[sandbox.kept.unreadable-ignored] a kept file that is not a kept wrap is ignored: the wrap is built and kept again", async () => {
    const first = await firstStart();
    const [file] = keptFiles(first.w.home);
    writeFileSync(file as string, '{"version": 1, "identity": "x", "wrapped": 7');
    const s = await SandboxSession.active(fake, cleanups, { workspace: first.w });
    expect((await s.shell("echo again")).output).toBe("again\n[exit code 0]");
    expect((await s.command("doctor")).text).toMatch(/sandbox wraps: 1 built, 1 reused\n/);
    expect(JSON.parse(readFileSync(file as string, "utf8"))).toMatchObject({ version: 1 });
  });
});
