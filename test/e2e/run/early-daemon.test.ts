// The daemon of a `tau run` started by the `tau` launcher script beside the run's client (bin/tau.cjs),
// through the real command run as a shell runs it (its `#!` line): the client adopts it, and a run
// that does not go ahead leaves neither a process nor a file of the session behind.
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { replayJournal, validateJournalRecord, type JournalRecord } from "../../../handwritten/store/index.js";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { processesOf, waitFor } from "../../support/daemon.js";
import { textResponse, toolCallResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { runTau } from "../../support/run-tau.js";

const cleanups = useCleanups();
let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));

// Run by the shell tool: the command lines and parents of the extension's daemon and of the daemon's
// parent (the client), whether the daemon leads a session of its own, who sees TAU_RUN_DAEMON, and
// the instance the extension was given.
const PROBE = `
args() { tr '\\0' ' ' < /proc/$1/cmdline | cut -d' ' -f3- | sed 's/ $//'; }
ppid() { cut -d' ' -f4 /proc/$1/stat; }
sid() { cut -d' ' -f6 /proc/$1/stat; }
seen() { tr '\\0' '\\n' < /proc/$1/environ | grep -c '^TAU_RUN_DAEMON=' || true; }
daemon=$(ppid $PPID)
client=$(ppid $daemon)
echo "client: $(args $client)"
echo "daemon: $(args $daemon)"
echo "daemon leads its session: $([ "$(sid $daemon)" = "$daemon" ] && echo yes || echo no)"
echo "TAU_RUN_DAEMON seen by the daemon: $(seen $daemon), by the extension: $(seen $PPID), by this command: \${TAU_RUN_DAEMON:-none}"
echo "instance: $(tr '\\0' '\\n' < /proc/$PPID/environ | grep '^TAU_DAEMON_INSTANCE=' | cut -d= -f2)"
`;

/** A TAU_HOME that has run before: the script makes a session's folder only inside an existing one. */
function ranBefore(home: string): void {
  mkdirSync(join(home, "state", "sessions"), { recursive: true, mode: 0o700 });
}

function sessionsOf(home: string): string[] {
  const dir = join(home, "state", "sessions");
  return existsSync(dir) ? readdirSync(dir) : [];
}

describe("the early daemon of tau run", () => {
  it("[run.early-daemon.adopted] the launcher script starts the daemon in its own session, minting what the client's launcher mints, and the client adopts it", async () => {
    const { env, home, project } = workspaceIn(cleanups);
    ranBefore(home);
    writeFileSync(join(project, "probe.sh"), PROBE);
    fake.enqueue(toolCallResponse([{ id: "call_probe", name: "shell", arguments: JSON.stringify({ command: "sh probe.sh" }) }]), textResponse("Probed."));
    // The probe reads the daemon's and the client's /proc entries: only an unsandboxed command sees them.
    const r = await runTau(["run", "--no-sandbox", "-p", "probe"], {
      env: { ...env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "k", OPENAI_MODEL: "fake-model", TAU_RUN_DAEMON: "1" },
      cwd: project,
      asCommand: true,
    });
    expect(r.stderr).toBe("[shell ok] sh probe.sh\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Probed.\n");

    const [session, ...others] = sessionsOf(home);
    expect(others).toEqual([]);
    expect(session).toMatch(/^s-[0-9a-z]{8}-[0-9a-f]{12}$/);
    const folder = join(home, "state", "sessions", session as string);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(join(folder, "daemon.log")).mode & 0o777).toBe(0o600);
    const log = readFileSync(join(folder, "daemon.log"), "utf8");
    const socket = /^tau daemon: session (\S+) on (\S+)\.sock/.exec(log);
    expect(socket?.[1]).toBe(session);

    const agents = join(home, "state", "agents");
    const [agent] = readdirSync(agents);
    const journal = replayJournal<JournalRecord>(join(agents, agent as string, "events.cbor"), { validate: validateJournalRecord }).records;
    const output = String(journal.find((x) => x.event.name === "provider.tool_result")?.event.data.output).trim().split("\n");
    const [note, client, daemon, leads, seen, instance] = output;
    expect(note).toMatch(/^\[sandbox: not in use/);
    expect(client).toBe("client: run --no-sandbox -p probe");
    expect(daemon).toMatch(new RegExp(`^daemon: daemon --for-run ${session} [0-9a-f]{16} --no-sandbox -p probe$`));
    expect(leads).toBe("daemon leads its session: yes");
    expect(seen).toBe("TAU_RUN_DAEMON seen by the daemon: 0, by the extension: 0, by this command: none");
    // The instance it was handed is the one its socket is named by (<pid>-<instance>.sock), and the one
    // its extensions see, as from the client's own launcher.
    expect(instance).toBe(`instance: ${daemon?.split(" ")[4]}`);
    expect(socket?.[2]).toMatch(new RegExp(`-${instance?.slice("instance: ".length)}$`));
  });

  it("[run.early-daemon.not-going-ahead] a run refused before it starts leaves no session folder and no process behind", async () => {
    const cases: Array<{ args: string[]; input?: string; harness?: string; stderr: (home: string) => string }> = [
      { args: ["run", "--bogus", "-p", "hi"], stderr: () => "tau run: Unknown option '--bogus'" },
      { args: ["run"], stderr: () => "tau run: give a prompt" },
      { args: ["run", "--prompt-stdin"], input: "  \n", stderr: () => "tau run: give a prompt" },
      { args: ["run", "-p", "hi"], harness: "model: 7\n", stderr: (home) => `tau: ${join(home, "config", "harness.yaml")}:1: model: must be string [TAU-E0201]\n` },
      { args: ["run", "--ephemeral", "-p", "hi"], harness: "model: 7\n", stderr: (home) => `tau: ${join(home, "config", "harness.yaml")}:1: model: must be string [TAU-E0201]\n` },
    ];
    for (const c of cases) {
      const { env, home, project } = workspaceIn(cleanups, c.harness);
      ranBefore(home);
      const r = await runTau(c.args, { env, cwd: project, asCommand: true, ...(c.input !== undefined ? { input: c.input } : {}) });
      expect(r.code, c.args.join(" ")).toBe(2);
      expect(r.stderr.startsWith(c.stderr(home)), `${c.args.join(" ")}: ${r.stderr}`).toBe(true);
      expect(sessionsOf(home), c.args.join(" ")).toEqual([]);
      await waitFor(() => processesOf(home).length === 0, `the processes of ${c.args.join(" ")} to end`);
    }
  });

  it("[run.early-daemon.not-started] asking for help makes no session folder, a first run leaves the daemon to the client, a pid handed in from outside is never adopted", async () => {
    const { env, home, project } = workspaceIn(cleanups);
    const help = await runTau(["run", "--help"], { env, cwd: project, asCommand: true });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--prompt-stdin");
    expect(sessionsOf(home)).toEqual([]);
    expect(processesOf(home)).toEqual([]);

    fake.enqueue(textResponse("Fine."));
    const ephemeral = await runTau(["run", "--ephemeral", "-p", "hi"], { env: { ...env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "k", OPENAI_MODEL: "fake-model" }, cwd: project, asCommand: true });
    expect(ephemeral.code).toBe(0);
    expect(ephemeral.stdout).toBe("Fine.\n");
    expect(existsSync(join(home, "state", "sessions"))).toBe(false);

    // The first run of a TAU_HOME (no sessions folder yet) starts its daemon from the client.
    const timeline = join(home, "timeline.txt");
    fake.enqueue(textResponse("First."));
    const first = await runTau(["run", "-p", "hi"], { env: { ...env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "k", OPENAI_MODEL: "fake-model", TAU_TIMELINE: timeline }, cwd: project, asCommand: true });
    expect(first.code).toBe(0);
    expect(first.stdout).toBe("First.\n");
    const marks = readFileSync(timeline, "utf8");
    expect(marks).toContain(" run daemon spawned\n");
    expect(marks).not.toContain(" run daemon adopted\n");
    expect(sessionsOf(home)).toHaveLength(1);

    // A process that is not the client's child, named as its daemon: never adopted, never signalled.
    const bystander = spawn("sleep", ["30"], { stdio: "ignore" });
    cleanups.push(() => bystander.kill("SIGKILL"));
    fake.enqueue(textResponse("Still fine."));
    const direct = await runTau(["run", "-p", "hi"], { env: { ...env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "k", OPENAI_MODEL: "fake-model", TAU_RUN_DAEMON: String(bystander.pid) }, cwd: project });
    expect(direct.code).toBe(0);
    expect(direct.stdout).toBe("Still fine.\n");
    const refused = await runTau(["run", "--bogus"], { env: { ...env, TAU_RUN_DAEMON: String(bystander.pid) }, cwd: project });
    expect(refused.code).toBe(2);
    expect(bystander.exitCode).toBeNull();
    expect(bystander.signalCode).toBeNull();
  });

  it("[run.daemon-exited.reason] a daemon that exits before its socket is up has its reason shown (from its log, or for --ephemeral from the runtime folder), its log kept", async () => {
    for (const asCommand of [true, false]) {
      const { env, home, project } = workspaceIn(cleanups);
      ranBefore(home);
      mkdirSync(join(home, "runtime"), { mode: 0o755 });
      chmodSync(join(home, "runtime"), 0o755);
      const r = await runTau(["run", "-p", "hi"], { env, cwd: project, asCommand });
      expect(r.code, `asCommand ${asCommand}`).toBe(1);
      const [session] = sessionsOf(home);
      const log = join(home, "state", "sessions", session as string, "daemon.log");
      expect(r.stderr).toBe(
        `tau: runtime directory "${join(home, "runtime")}" has mode 0755, expected 0700; refusing to use it (fix: chmod 700 "${join(home, "runtime")}") (the tau daemon exited before it started; see ${log}) [TAU-E0401]\n`,
      );
      expect(readFileSync(log, "utf8")).toContain("tau daemon: runtime directory");
      await waitFor(() => processesOf(home).length === 0, "the daemon's processes to end");

      // An --ephemeral daemon logs nowhere: the client finds the runtime folder's problem itself.
      const ephemeral = await runTau(["run", "--ephemeral", "-p", "hi"], { env, cwd: project, asCommand });
      expect(ephemeral.code).toBe(1);
      expect(ephemeral.stderr).toBe(
        `tau: runtime directory "${join(home, "runtime")}" has mode 0755, expected 0700; refusing to use it (fix: chmod 700 "${join(home, "runtime")}") (the tau daemon exited before it started) [TAU-E0401]\n`,
      );
      expect(sessionsOf(home)).toEqual([session]);
    }
  });
});
