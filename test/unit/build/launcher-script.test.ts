// The `tau` launcher script (the head of bin/tau.cjs) is written from the launch facts, and does what
// tau's TypeScript does with them: the real script is run by sh with a stand-in `node` on PATH that
// records how it was started (its arguments, the variables that matter, what it was handed on fd 3).
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveRoots } from "../../../handwritten/config/paths.js";
import { launcherHead, withLauncherHead } from "../../../handwritten/cli/launcher-script.js";
import { parseEarlyLaunch, parseRunArgs } from "../../../handwritten/cli/run/index.js";
import { mintId } from "../../../handwritten/harness/ids.js";
import {
  DAEMON_LOG,
  DEFERRED_CA_CERTS_ENV,
  INSTANCE_PATTERN,
  RUN_DAEMON_ENV,
  SECRETS_FD_ENV,
  SESSION_DIR_MODE,
  SESSION_ID_PATTERN,
  SESSIONS_DIR,
  earlyDaemonArgs,
} from "../../../handwritten/startup/launch-facts.js";
import { isValidInstance, mintInstance } from "../../../handwritten/transport/discovery.js";
import { REPO_ROOT, TAU_BIN } from "../../support/paths.js";
import { waitFor } from "../../support/wait.js";

const scratch = mkdtempSync(join(tmpdir(), "tau-launcher-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A `node` that records each start as `<pid>.txt` in $LAUNCH_RECORDS and exits. */
const FAKE_NODE = `#!/bin/sh
out="$LAUNCH_RECORDS/$$.txt"
{
  for a in "$@"; do printf '%s\\n' "$a"; done
  echo '--env--'
  env | grep -E '^(TAU_|NODE_EXTRA_CA_CERTS=|OPENAI_API_KEY=)' | grep -v '^TAU_HOME=' | sort
  if [ "$TAU_SECRETS_FD" = 3 ]; then echo '--fd3--'; cat <&3; fi
} >"$out.tmp"
mv "$out.tmp" "$out"
`;

interface Start {
  readonly args: string[];
  readonly env: Map<string, string>;
  readonly fd3?: string;
}

function readStart(file: string): Start {
  const text = readFileSync(file, "utf8");
  const [argsPart, rest = ""] = text.split("--env--\n");
  const [envPart = "", fd3] = rest.split("--fd3--\n");
  const env = new Map(
    envPart
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)] as [string, string]),
  );
  return { args: (argsPart ?? "").split("\n").slice(0, -1), env, ...(fd3 !== undefined ? { fd3 } : {}) };
}

let runs = 0;

/**
 * Runs `sh bin/tau.cjs ARGS` with the stand-in node; returns the client's start and, when the script
 * started one, the early daemon's (waiting for the background child to get there).
 */
async function launch(args: string[], env: NodeJS.ProcessEnv, expectDaemon: boolean): Promise<{ client: Start; daemon?: Start }> {
  const dir = join(scratch, `run-${runs++}`);
  const bin = join(dir, "bin");
  const records = join(dir, "records");
  mkdirSync(bin, { recursive: true });
  mkdirSync(records);
  writeFileSync(join(bin, "node"), FAKE_NODE);
  chmodSync(join(bin, "node"), 0o755);
  const r = spawnSync("/bin/sh", [TAU_BIN, ...args], { env: { PATH: `${bin}:/usr/bin:/bin`, LAUNCH_RECORDS: records, ...env }, encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  const starts = () => readdirSync(records).filter((f) => f.endsWith(".txt"));
  if (expectDaemon) await waitFor(() => starts().length >= 2, "the early daemon's start to be recorded");
  // timing-under-test: a daemon that must not start leaves no event to wait for; it gets 200 ms to show up wrongly
  else await new Promise((res) => setTimeout(res, 200));
  const all = starts().map((f) => readStart(join(records, f)));
  const client = all.find((s) => s.args[1] === args[0]) as Start;
  const daemon = all.find((s) => s !== client);
  expect(all).toHaveLength(expectDaemon ? 2 : 1);
  return { client, ...(daemon ? { daemon } : {}) };
}

describe("the launcher script", () => {
  it("[launch.head.generated] the head of bin/tau.cjs is exactly what the build writes from the launch facts", () => {
    const file = readFileSync(TAU_BIN, "utf8");
    expect(file.startsWith(launcherHead())).toBe(true);
    expect(withLauncherHead(file)).toBe(file);
    // The build refuses a drifted head in its check mode.
    const check = spawnSync(process.execPath, ["--import", "tsx", join(REPO_ROOT, "build.ts"), "--check"], { cwd: REPO_ROOT, encoding: "utf8" });
    expect(check.status, check.stderr).toBe(0);
  });
});

// The script starts an early daemon only where setsid and /proc are (Linux).
describe.runIf(process.platform === "linux")("the launcher script, run by sh", () => {
  it("[launch.head.agrees] the script's early daemon gets the state root, ids and arguments tau's TypeScript resolves, mints and parses", async () => {
    // Each rule of the state root, with the rules after it set too (they must lose).
    const cases: Array<{ name: string; env: (home: string) => NodeJS.ProcessEnv }> = [
      { name: "TAU_HOME", env: (home) => ({ TAU_HOME: join(home, "tau-home"), XDG_STATE_HOME: join(home, "unused"), HOME: join(home, "unused") }) },
      { name: "XDG_STATE_HOME", env: (home) => ({ XDG_STATE_HOME: join(home, "xdg-state"), HOME: join(home, "unused") }) },
      { name: "HOME", env: (home) => ({ HOME: join(home, "home") }) },
    ];
    for (const c of cases) {
      const env = c.env(mkdtempSync(join(scratch, "home-")));
      const state = resolveRoots(env).state;
      mkdirSync(join(state, SESSIONS_DIR), { recursive: true }); // a state root that has run before
      const { client, daemon } = await launch(["run", "-p", "hi", "--json"], env, true);
      expect(client.args, c.name).toEqual([TAU_BIN, "run", "-p", "hi", "--json"]);
      const launchArgs = parseEarlyLaunch(daemon?.args ?? [], 1);
      expect(launchArgs, `${c.name}: ${daemon?.args.join(" ")}`).toBeDefined();
      const { sessionId, instance } = launchArgs as { sessionId: string; instance: string };
      expect(daemon?.args).toEqual([TAU_BIN, ...earlyDaemonArgs(sessionId, instance, ["-p", "hi", "--json"])]);
      expect(sessionId).toMatch(SESSION_ID_PATTERN);
      expect(instance).toMatch(INSTANCE_PATTERN);
      expect(isValidInstance(instance)).toBe(true);
      // Made where tau's own launcher makes it, as tau makes it.
      expect(readdirSync(join(state, SESSIONS_DIR)), c.name).toEqual([sessionId]);
      expect(statSync(join(state, SESSIONS_DIR, sessionId)).mode & 0o777).toBe(SESSION_DIR_MODE);
      expect(existsSync(join(state, SESSIONS_DIR, sessionId, DAEMON_LOG))).toBe(true);
      // The client alone is told the daemon's pid; the daemon never sees it.
      expect(client.env.get(RUN_DAEMON_ENV)).toMatch(/^[1-9][0-9]*$/);
      expect(daemon?.env.has(RUN_DAEMON_ENV)).toBe(false);
    }
  });

  it("[launch.head.agrees] no early daemon for help, none in a state root that never ran, no folder for --ephemeral", async () => {
    const home = mkdtempSync(join(scratch, "home-"));
    const env = { TAU_HOME: home };
    for (const help of ["--help", "-h"]) {
      const { client } = await launch(["run", help], env, false);
      expect(client.env.has(RUN_DAEMON_ENV)).toBe(false);
    }
    // No sessions folder yet: the child gives up and the client starts the daemon itself.
    await launch(["run", "-p", "hi"], env, false);
    expect(existsSync(join(home, "state"))).toBe(false);
    mkdirSync(join(home, "state", SESSIONS_DIR), { recursive: true });
    const { daemon } = await launch(["run", "--ephemeral", "-p", "hi"], env, true);
    expect(parseRunArgs(daemon?.args.slice(5) ?? []).ok).toBe(true);
    expect(readdirSync(join(home, "state", SESSIONS_DIR))).toEqual([]);
  });

  it("[launch.head.agrees] secrets leave the environment for fd 3 and a NODE_EXTRA_CA_CERTS is deferred, for the client and the daemon alike", async () => {
    const home = mkdtempSync(join(scratch, "home-"));
    mkdirSync(join(home, "state", SESSIONS_DIR), { recursive: true });
    const env = { TAU_HOME: home, OPENAI_API_KEY: "sk-one", TAU_SECRET_OTHER: "two\nlines", NODE_EXTRA_CA_CERTS: "/etc/extra.pem", [SECRETS_FD_ENV]: "9" };
    const { client, daemon } = await launch(["run", "-p", "hi"], env, true);
    for (const start of [client, daemon as Start]) {
      expect([...start.env.keys()].filter((k) => k === "OPENAI_API_KEY" || k.startsWith("TAU_SECRET_"))).toEqual([]);
      expect(start.env.get(SECRETS_FD_ENV)).toBe("3");
      expect(start.fd3).toBe('":" //;OPENAI_API_KEY=sk-one\nTAU_SECRET_OTHER=two\nlines\n\n'); // the here-document's own line end follows the last one
      expect(start.env.has("NODE_EXTRA_CA_CERTS")).toBe(false);
      expect(start.env.get(DEFERRED_CA_CERTS_ENV)).toBe("/etc/extra.pem");
    }
  });
});

describe("the launch facts", () => {
  it("[launch.head.agrees] tau's own minting fits the patterns the script's ids are checked against", () => {
    for (let i = 0; i < 20; i++) {
      expect(mintId("s")).toMatch(SESSION_ID_PATTERN);
      expect(mintInstance()).toMatch(INSTANCE_PATTERN);
    }
  });
});
