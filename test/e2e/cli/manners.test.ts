// The command line as users try it: help however it is asked for, a prompt however it is given,
// and a closed pipe taken quietly. Each case checks the exact words and the exit status.
import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { runTau } from "../../support/run-tau.js";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { TAU_BIN } from "../../support/paths.js";
import { spawnTau } from "../../support/pty.js";
import { textResponse, type FakeOpenAI } from "../../support/fake-openai.js";
import { NO_PROMPT, STDIN_PROMPT_MAX_BYTES, STDIN_TOO_LARGE, TWO_PROMPTS } from "../../../handwritten/cli/run/index.js";
import { exitCodeOf } from "../../../handwritten/cli/errors.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

function env(): NodeJS.ProcessEnv {
  const w = workspaceIn(cleanups);
  return { ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "fake-model" };
}

/** The section of a help text under `heading`, up to the next blank line. */
function section(help: string, heading: string): string[] {
  const lines = help.split("\n");
  const at = lines.indexOf(heading);
  if (at < 0) return [];
  const end = lines.findIndex((l, i) => i > at && l === "");
  return lines.slice(at + 1, end < 0 ? undefined : end);
}

describe("help, however it is asked for", () => {
  it("[cli.help.everywhere] -h, help and --help answer alike, with exit 0, for tau, its commands and the daemon", async () => {
    const e = env();
    const root = await runTau(["--help"], { env: e });
    expect(root.code).toBe(0);
    for (const args of [["-h"], ["help"]]) {
      const r = await runTau(args, { env: e });
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout).toBe(root.stdout);
    }
    const run = await runTau(["run", "--help"], { env: e });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("$ tau run [PROMPT]");
    for (const args of [["run", "-h"], ["help", "run"]]) {
      const r = await runTau(args, { env: e });
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout).toBe(run.stdout);
    }
    const attach = await runTau(["attach", "-h"], { env: e });
    expect(attach.code).toBe(0);
    expect(attach.stdout).toContain("$ tau attach [SESSION]");
    const daemon = await runTau(["daemon", "--help"], { env: e });
    expect(daemon.code).toBe(0);
    expect(daemon.stdout).toMatch(/^tau daemon: the session daemon that `tau`, `tau run` and `tau resume` start for you/);
    expect(daemon.stdout).toContain("usage: tau daemon [--session-id ID | --resume ID]");
    expect((await runTau(["daemon", "-h"], { env: e })).stdout).toBe(daemon.stdout);
  });

  it("[cli.help.entry-points] tau --help names the interactive UI's entry points, and every topic has a description of its own", async () => {
    const r = await runTau(["--help"], { env: env() });
    const description = section(r.stdout, "DESCRIPTION").join(" ").replace(/\s+/g, " ");
    expect(description).toContain("`tau` opens it on a new session");
    expect(description).toContain("`tau attach [ID]` joins a running session");
    expect(description).toContain("`tau resume [ID]` restarts a saved one");
    expect(description).toContain("`tau run TEXT`");
    // A topic's description, joined across its wrapped lines.
    const topics = new Map<string, string>();
    let last = "";
    for (const line of section(r.stdout, "TOPICS")) {
      const m = /^ {2}(\S+)\s+(.*)$/.exec(line);
      if (m) topics.set((last = m[1] as string), m[2] as string);
      else topics.set(last, `${topics.get(last)} ${line.trim()}`);
    }
    expect([...topics.keys()].sort()).toEqual(["agent", "dev", "mcp", "provider", "session", "spec", "swarm"]);
    // Each its own: not one of its commands' summaries standing in for the topic.
    expect(new Set(topics.values()).size).toBe(topics.size);
    for (const [topic, text] of topics) {
      const help = await runTau([topic, "--help"], { env: env() });
      expect(help.stdout.split("\n")[0], topic).toBe(text);
      for (const line of section(help.stdout, "COMMANDS")) expect(line.replace(/^\s+\S+ \S+\s+/, ""), topic).not.toBe(text);
    }
  });
});

describe("a prompt, however it is given", () => {
  it("[run.prompt.positional] tau run TEXT sends TEXT, as -p TEXT does", async () => {
    fake.enqueue(textResponse("positional answer"));
    const r = await runTau(["run", "what is here?"], { env: env() });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("positional answer\n");
    expect(JSON.stringify(fake.requests.at(-1)?.body)).toContain("what is here?");
  });

  it("[run.prompt.piped] text piped in with no prompt is the prompt; - reads it explicitly", async () => {
    fake.enqueue(textResponse("piped answer"), textResponse("dash answer"));
    const piped = await runTau(["run"], { env: env(), input: "explain the diff\n" });
    expect(piped.code).toBe(0);
    expect(piped.stdout).toBe("piped answer\n");
    expect(JSON.stringify(fake.requests.at(-1)?.body)).toContain("explain the diff");
    const dash = await runTau(["run", "-", "--json"], { env: env(), input: "from the dash" });
    expect(dash.code).toBe(0);
    expect(dash.stdout).toContain('"event":"provider.response_finished"');
    expect(JSON.stringify(fake.requests.at(-1)?.body)).toContain("from the dash");
    // An empty pipe is no prompt.
    const empty = await runTau(["run"], { env: env(), input: "" });
    expect(empty.code).toBe(exitCodeOf("TAU-E0102"));
    expect(empty.stderr).toBe(`${NO_PROMPT} [TAU-E0102]\n`);
  });

  it("[run.prompt.sources-conflict] two prompt sources, or two prompt arguments, are refused with exit 2", async () => {
    const e = env();
    for (const args of [["run", "-p", "one", "two"], ["run", "--prompt-stdin", "-p", "one"], ["run", "--prompt-stdin", "one"], ["run", "-p", "one", "-"]]) {
      const r = await runTau(args, { env: e, input: "three" });
      expect(r.code, args.join(" ")).toBe(2);
      expect(exitCodeOf("TAU-E0107")).toBe(2);
      expect(r.stderr, args.join(" ")).toBe(`${TWO_PROMPTS} [TAU-E0107]\n`);
      expect(r.stdout).toBe("");
    }
    const two = await runTau(["run", "one", "two"], { env: e });
    expect(two.code).toBe(2);
    expect(two.stderr).toBe('tau run: one prompt argument, not 2 (quote it: tau run "fix the failing test") [TAU-E0101]\nSee: tau run --help\n');
    expect(fake.requests).toHaveLength(0);
  });

  it("[run.prompt.stdin-bounded] a prompt piped in over 8 MiB is refused, having read no more than that", async () => {
    const r = await runTau(["run"], { env: env(), input: "x".repeat(STDIN_PROMPT_MAX_BYTES + 1) });
    expect(r.code).toBe(exitCodeOf("TAU-E0108"));
    expect(r.stderr).toBe(`${STDIN_TOO_LARGE} [TAU-E0108]\n`);
    expect(fake.requests).toHaveLength(0);
    // At the bound itself the prompt goes through.
    fake.enqueue(textResponse("big one read"));
    const at = await runTau(["run"], { env: env(), input: "y".repeat(STDIN_PROMPT_MAX_BYTES) });
    expect(at.stderr).toBe("");
    expect(at.stdout).toBe("big one read\n");
  });

  it("[run.prompt.terminal-not-waited] with no prompt and a terminal on stdin, tau run says how to give one instead of waiting", async () => {
    const w = workspaceIn(cleanups);
    const t = spawnTau(["run"], { env: { ...process.env, ...w.env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "fake-model" }, cwd: w.project });
    cleanups.push(() => t.kill());
    const { exitCode } = await t.exited;
    await t.settled();
    expect(exitCode).toBe(exitCodeOf("TAU-E0102"));
    expect(t.all().join(" ")).toContain(NO_PROMPT.slice(0, 40));
    expect(fake.requests).toHaveLength(0);
  });
});

describe("a closed pipe", () => {
  it("[run.output.reader-gone] tau run --json whose reader goes away ends quietly: no stack trace, the prompt cancelled", async () => {
    // A long answer, streamed slowly, so the reader leaves while it is still coming.
    fake.enqueue(textResponse(Array.from({ length: 200 }, (_, i) => `part ${i} `), { delayMs: 10 }));
    const child = spawn(process.execPath, [TAU_BIN, "run", "--json", "a long answer please"], { env: { ...process.env, ...env() }, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    // Like `| head -1`: read one line, then close the read end.
    await new Promise<void>((resolve) => {
      let seen = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        seen += d;
        if (seen.includes("\n")) {
          child.stdout.destroy();
          resolve();
        }
      });
    });
    const code = await closed;
    expect(stderr).not.toMatch(/EPIPE|Error:|\n\s+at /);
    expect(code).toBe(exitCodeOf("TAU-E0306"));
  });
});
