import { describe, expect, it } from "vitest";
import { chmodSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runTau } from "../../support/run-tau.js";
import { waitFor, waitForOwnedDaemons } from "../../support/daemon.js";
import { processTree, useCleanups, useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { FakeOpenAI, errorResponse, textResponse } from "../../support/fake-openai.js";
import { exitCodeOf } from "../../../handwritten/cli/errors.js";
import { TAU_BIN } from "../../support/paths.js";
import pty from "@lydell/node-pty";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));
const cleanups = useCleanups();

/** No OPENAI_* from the machine running the tests: only the profile may answer. */
const NO_OPENAI = { OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined, OPENAI_MODEL: undefined, TAU_SECRET_OPENAI_API_KEY: undefined };

/** What the endpoint lists: `tau provider add` asks it before writing a profile. */
const LISTED = ["fake-model", "other-model", "m", "zeta-model", "alpha-model", "env-model"];

function workspace(): Workspace {
  fake.setModels(LISTED);
  const w = workspaceIn(cleanups, "debug_log:\n  enable: true\n"); // the default extensions
  return { ...w, env: { ...w.env, ...NO_OPENAI } };
}

const mode = (p: string) => statSync(p).mode & 0o777;

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name));
}

describe("tau provider", () => {
  it("[provider.add.profile-secret-isolation] adds a profile whose 0600 key reaches only the provider's configure", async () => {
    const { env, home, project } = workspace();
    const KEY = "sk-profile-7f3a9c1e5b2d4f60";
    const add = await runTau(["provider", "add", "work", "--base-url", fake.baseUrl, "--model", "fake-model,other-model", "--api-key-stdin"], { env, input: `${KEY}\n` });
    expect(add.stderr).toBe(`checking ${fake.baseUrl} …\n`);
    expect(add.code).toBe(0);
    expect(add.stdout).toContain(`the endpoint answered: ${LISTED.length} models`);
    expect(add.stdout).not.toContain(KEY);
    const secret = join(home, "config", "secrets", "provider-work");
    const dropIn = join(home, "config", "harness.d", "provider-work.yaml");
    expect(mode(join(home, "config", "secrets"))).toBe(0o700);
    expect(mode(secret)).toBe(0o600);
    expect(mode(dropIn)).toBe(0o600);
    expect(readFileSync(secret, "utf8")).toBe(KEY);
    expect(readFileSync(dropIn, "utf8")).not.toContain(KEY);
    expect(readdirSync(join(home, "config", "secrets"))).toEqual(["provider-work"]); // no temporary left behind

    const list = await runTau(["provider", "list", "--json"], { env });
    expect(JSON.parse(list.stdout)).toEqual([{ name: "work", base_url: fake.baseUrl, models: ["fake-model", "other-model"], key: "secrets/provider-work" }]);
    expect(list.stdout).not.toContain(KEY);

    // A slow answer keeps the daemon and its extensions alive while their environments are read.
    fake.enqueue(textResponse(["through ", "the ", "profile"], { delayMs: 400 }));
    const before = fake.chatRequests.length;
    const run = runTau(["run", "-p", "hello"], { env, cwd: project });
    await waitFor(() => fake.chatRequests.length > before, "the chat request", 20_000);
    const runtime = readdirSync(join(home, "runtime")).find((n) => n.endsWith(".json"));
    expect(runtime).toBeDefined();
    const daemonPid = Number((runtime as string).split("-")[0]);
    const tree = processTree(daemonPid);
    expect(tree.length).toBeGreaterThanOrEqual(3); // the daemon, the provider and the shell extension
    let inspected = 0;
    for (const pid of tree) {
      let environ: Buffer;
      let cmdline: Buffer;
      try {
        environ = readFileSync(`/proc/${pid}/environ`);
        cmdline = readFileSync(`/proc/${pid}/cmdline`);
      } catch {
        continue;
      }
      inspected++;
      expect(environ.includes(KEY), `environment of ${pid}`).toBe(false);
      expect(cmdline.includes(KEY), `argv of ${pid}`).toBe(false);
      expect(environ.includes("TAU_SECRET_"), `environment of ${pid}`).toBe(false);
    }
    expect(inspected).toBeGreaterThanOrEqual(3);
    const r = await run;
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("through the profile\n");
    const req = fake.chatRequests[before]!;
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect((req.body as { model: string }).model).toBe("fake-model"); // the first model of the only profile

    // The key is in no journal, debug log, extension log or runtime file (once the daemon has finished).
    waitForOwnedDaemons(home);
    const stateFiles = filesUnder(join(home, "state"));
    expect(stateFiles.some((f) => f.endsWith("events.jsonl"))).toBe(true);
    expect(stateFiles.some((f) => f.endsWith("events.cbor"))).toBe(true);
    for (const f of [...stateFiles, ...filesUnder(join(home, "runtime"))]) expect(readFileSync(f).includes(KEY), f).toBe(false);
    expect(r.stdout + r.stderr).not.toContain(KEY);
  });

  it("[provider.add.secret-mode-refused] refuses a key file readable by others, before any request, with the fix", async () => {
    const { env, home, project } = workspace();
    const add = await runTau(["provider", "add", "work", "--base-url", fake.baseUrl, "--model", "fake-model", "--api-key-stdin"], { env, input: "sk-wide-mode-key" });
    expect(add.code).toBe(0);
    const secret = join(home, "config", "secrets", "provider-work");
    chmodSync(secret, 0o644);
    const before = fake.requests.length;
    const r = await runTau(["run", "-p", "hello"], { env, cwd: project });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`chmod 600 ${secret}`);
    expect(r.stderr).not.toContain("sk-wide-mode-key");
    expect(fake.requests.length).toBe(before);
    // The daemon refuses too, when started directly.
    const d = await runTau(["daemon", "--ephemeral", "--print", "system-prompt"], { env, cwd: project });
    expect(d.code).toBe(2);
    expect(d.stderr).toContain("chmod 600");
  });

  it("[provider.add.key-never-an-argument] takes no key argument, needs one on stdin off a terminal, and validates names", async () => {
    const { env } = workspace();
    const noKey = await runTau(["provider", "add", "work", "--base-url", fake.baseUrl, "--model", "m"], { env });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("--api-key-stdin");
    const argKey = await runTau(["provider", "add", "work", "--base-url", fake.baseUrl, "--model", "m", "--api-key", "sk-x"], { env });
    expect(argKey.code).not.toBe(0);
    const reserved = await runTau(["provider", "add", "shell", "--base-url", fake.baseUrl, "--model", "m", "--no-api-key"], { env });
    expect(reserved.code).toBe(2);
    expect(reserved.stderr).toContain("reserved");
    const badUrl = await runTau(["provider", "add", "work", "--base-url", "ftp://x", "--model", "m", "--no-api-key"], { env });
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain("--base-url must start with http:// or https://, not ftp:");
    const ok = await runTau(["provider", "add", "work", "--base-url", fake.baseUrl, "--model", "m", "--no-api-key"], { env });
    expect(ok.code).toBe(0);
    const again = await runTau(["provider", "add", "work", "--base-url", fake.baseUrl, "--model", "m", "--no-api-key"], { env });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("--force");
    const rm = await runTau(["provider", "remove", "work"], { env });
    expect(rm.code).toBe(0);
    const list = await runTau(["provider", "list", "--json"], { env });
    expect(JSON.parse(list.stdout)).toEqual([]);
  });

  it("[provider.add.endpoint-checked] asks the endpoint for its models first: a dead or refusing endpoint writes nothing, an unlisted model is warned about", async () => {
    const { env, home } = workspace();
    const KEY = "sk-checked-endpoint-5521";
    const nothingWritten = () => {
      expect(readdirSync(join(home, "config")).filter((n) => n === "harness.d" || n === "secrets").flatMap((d) => readdirSync(join(home, "config", d)))).toEqual([]);
    };
    // A user and password in the URL is refused before the key is read.
    const userinfo = await runTau(["provider", "add", "work", "--base-url", "https://me:pw@example.com/v1", "--model", "m", "--api-key-stdin"], { env, input: KEY });
    expect(userinfo.code).toBe(2);
    expect(userinfo.stderr).toContain("--base-url must not carry a user or password");
    // Nothing listens there.
    const dead = await runTau(["provider", "add", "work", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--api-key-stdin"], { env, input: KEY });
    expect(dead.code).toBe(exitCodeOf("TAU-E0406"));
    expect(dead.stderr).toMatch(/^checking http:\/\/127\.0\.0\.1:9\/v1 …\ntau: provider add: the endpoint did not list its models: .+; nothing was written\. Check the URL and the key, or add the profile anyway with --no-check \[TAU-E0406\]\n$/);
    expect(dead.stderr + dead.stdout).not.toContain(KEY);
    nothingWritten();
    // The key is refused: the reason names the status, never the key.
    fake.setModels(errorResponse(401, { message: "bad key", code: "invalid_api_key" }));
    const before = fake.modelRequests.length;
    const refused = await runTau(["provider", "add", "work", "--base-url", fake.baseUrl, "--model", "m", "--api-key-stdin"], { env, input: KEY });
    expect(refused.code).toBe(exitCodeOf("TAU-E0406"));
    expect(refused.stderr).toContain("the endpoint did not list its models: HTTP 401");
    expect(refused.stderr + refused.stdout).not.toContain(KEY);
    expect(fake.modelRequests.slice(before).map((r) => r.headers.authorization)).toEqual([`Bearer ${KEY}`]);
    nothingWritten();
    // --no-check asks nothing and writes the profile.
    const unchecked = await runTau(["provider", "add", "later", "--base-url", fake.baseUrl, "--model", "m", "--no-api-key", "--no-check"], { env });
    expect(unchecked.code).toBe(0);
    expect(fake.modelRequests.length).toBe(before + 1);
    // A model the endpoint does not list is warned about, with close matches; the profile is written.
    fake.setModels(LISTED);
    const typo = await runTau(["provider", "add", "work", "--base-url", fake.baseUrl, "--model", "alpha-modle", "--api-key-stdin"], { env, input: KEY });
    expect(typo.code).toBe(0);
    expect(typo.stderr).toBe(`checking ${fake.baseUrl} …\nwarning: the endpoint does not list the model alpha-modle; close matches: alpha-model\n`);
    expect(readFileSync(join(home, "config", "secrets", "provider-work"), "utf8")).toBe(KEY);
  });

  it("[provider.add.models-from-endpoint] without --model the profile takes the models the endpoint lists, the first its default; unchecked, --model is asked for", async () => {
    const { env, home } = workspace();
    fake.setModels(LISTED);
    const listed = await runTau(["provider", "add", "local", "--base-url", fake.baseUrl, "--no-api-key"], { env });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`models: ${LISTED.map((m) => `local/${m}`).join(", ")}`);
    expect(readFileSync(join(home, "config", "harness.d", "provider-local.yaml"), "utf8")).toContain("fake-model");
    const unchecked = await runTau(["provider", "add", "later", "--base-url", fake.baseUrl, "--no-api-key", "--no-check"], { env });
    expect(unchecked.code).toBe(2);
    expect(unchecked.stderr.replace(/\s*›\s*/g, " ")).toContain("give --model: --no-check asks the endpoint nothing, so its models are not known");
    expect(readdirSync(join(home, "config", "harness.d"))).toEqual(["provider-local.yaml"]);
  });

  it("[provider.add.force-failure-keeps-old] a --force replacement that fails leaves the old profile and its key exactly as they were", async () => {
    const { env, home } = workspace();
    const add = await runTau(["provider", "add", "work", "--base-url", fake.baseUrl, "--model", "fake-model", "--api-key-stdin", "--no-check"], { env, input: "sk-old-key-123456\n" });
    expect(add.code, add.stderr).toBe(0);
    const secret = join(home, "config", "secrets", "provider-work");
    const dropIn = join(home, "config", "harness.d", "provider-work.yaml");
    const before = [readFileSync(dropIn), readFileSync(secret)];
    // 65 models: the new drop-in is refused after its key was written.
    const models = Array.from({ length: 65 }, (_, i) => `m${i}`).join(",");
    const bad = await runTau(["provider", "add", "work", "--force", "--base-url", fake.baseUrl, "--model", models, "--api-key-stdin", "--no-check"], { env, input: "sk-new-key-999999\n" });
    expect(bad.code).toBe(exitCodeOf("TAU-E0201"));
    expect(bad.stderr).toContain("providers.work.models");
    expect([readFileSync(dropIn), readFileSync(secret)]).toEqual(before);
    expect(mode(secret)).toBe(0o600);
    expect(readdirSync(join(home, "config", "secrets"))).toEqual(["provider-work"]); // no temporary left behind
    // Replacing it with a profile without a key removes the old key only once the new one holds.
    const keyless = await runTau(["provider", "add", "work", "--force", "--base-url", fake.baseUrl, "--model", "other-model", "--no-api-key", "--no-check"], { env });
    expect(keyless.code, keyless.stderr).toBe(0);
    expect(readdirSync(join(home, "config", "secrets"))).toEqual([]);
    expect(readFileSync(dropIn, "utf8")).toContain("other-model");
  });

  it("[provider.add.hidden-prompt] on a terminal, prompts for the key without echoing it", async () => {
    const { env, home } = workspace();
    const KEY = "sk-typed-on-a-terminal-42";
    const term = pty.spawn(process.execPath, [TAU_BIN, "provider", "add", "tty", "--base-url", fake.baseUrl, "--model", "m"], {
      cols: 120,
      rows: 24,
      env: Object.fromEntries(Object.entries({ ...process.env, ...env }).filter((e): e is [string, string] => e[1] !== undefined)),
    });
    let screen = "";
    term.onData((d) => (screen += d));
    const exited = new Promise<number>((resolve) => term.onExit((e) => resolve(e.exitCode)));
    await waitFor(() => screen.includes("API key for tty (input hidden): "), "the key prompt", 20_000);
    for (const ch of `${KEY}x\u007f`) term.write(ch); // a typo and a backspace
    term.write("\r");
    expect(await exited).toBe(0);
    expect(screen).not.toContain(KEY.slice(0, 8));
    expect(screen).toContain("secrets/provider-tty (mode 0600)");
    const secret = join(home, "config", "secrets", "provider-tty");
    expect(readFileSync(secret, "utf8")).toBe(KEY);
    expect(mode(secret)).toBe(0o600);
  });

  it("[provider.select.rule] picks the configured model, else OPENAI_BASE_URL, else the first profile in name order", async () => {
    const { env, home, project } = workspace();
    for (const [name, model] of [
      ["zeta", "zeta-model"],
      ["alpha", "alpha-model"],
    ]) {
      const a = await runTau(["provider", "add", name as string, "--base-url", fake.baseUrl, "--model", model as string, "--api-key-stdin"], { env, input: `sk-${name}` });
      expect(a.code).toBe(0);
    }
    const modelOf = async (extraEnv: NodeJS.ProcessEnv, args: string[] = []) => {
      fake.enqueue(textResponse("ok"));
      const before = fake.chatRequests.length;
      const r = await runTau(["run", "-p", "which?", ...args], { env: { ...env, ...extraEnv }, cwd: project });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const req = fake.chatRequests[before]!;
      return { model: (req.body as { model: string }).model, auth: req.headers.authorization };
    };
    expect(await modelOf({})).toEqual({ model: "alpha-model", auth: "Bearer sk-alpha" });
    expect(await modelOf({}, ["--model", "zeta/zeta-model"])).toEqual({ model: "zeta-model", auth: "Bearer sk-zeta" });
    expect(await modelOf({ OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-env", OPENAI_MODEL: "env-model" })).toEqual({ model: "env-model", auth: "Bearer sk-env" });
    writeFileSync(join(home, "config", "harness.yaml"), "model: zeta/zeta-model\n");
    expect(await modelOf({ OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-env", OPENAI_MODEL: "env-model" })).toEqual({ model: "zeta-model", auth: "Bearer sk-zeta" });
  });
});
