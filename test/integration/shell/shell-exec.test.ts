// The shell tool with real processes: process-group kills, bounded output, secret-free environment
// (SPEC-shell-tools, GATE-shell-tools).
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ToolError, limits, runShell, shellTool } from "../../../handwritten/extensions/shell/tools/index.js";
import { bashInvocation } from "../../../handwritten/extensions/shell/tools/shell.js";
import { context, tempDir } from "../../unit/shell/helpers.js";
import { waitFor } from "../../support/wait.js";

/** Gone means no such process, or a zombie awaiting its reaper. */
function processGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/** The file's text once a whole line is in it. */
async function waitForFile(path: string): Promise<string> {
  let text = "";
  await waitFor(() => existsSync(path) && (text = readFileSync(path, "utf8")).endsWith("\n"), `a line in ${path}`);
  return text.trim();
}

const HEAD = limits.SHELL_OUTPUT_HEAD_BYTES;
const TAIL = limits.SHELL_OUTPUT_TAIL_BYTES;

describe("shell", () => {
  it("runs bash in the working directory with stdout and stderr interleaved and the exit status", async () => {
    const dir = tempDir();
    const result = await shellTool.run({ command: "pwd; echo out; echo err >&2; echo out2; exit 3" }, context(dir));
    expect(result.output).toBe(`${dir}\nout\nerr\nout2\n[exit code 3]`);
    expect(result.display?.summary).toBe("exit code 3");
    expect((await shellTool.run({ command: "true" }, context(dir))).output).toBe("(no output)\n[exit code 0]");
    expect((await shellTool.run({ command: "kill -SEGV $$" }, context(dir))).output).toBe("(no output)\n[killed by signal SIGSEGV]");
    expect((await shellTool.run({ command: "nosuchcommand-tau" }, context(dir))).output).toBe("bash: line 1: nosuchcommand-tau: command not found\n[exit code 127]");
    const missing = await shellTool.run({ command: "true" }, context(join(dir, "gone"))).catch((e: unknown) => e);
    expect((missing as ToolError).message).toBe(`The working directory ${join(dir, "gone")} does not exist or is not a directory.`);
  });

  it("is one plain `bash -c`, stderr joined before the first line is parsed, whatever the environment", async () => {
    const dir = tempDir();
    const run = async (command: string, env?: NodeJS.ProcessEnv) => {
      const outcome = await runShell({ command, cwd: dir, timeoutMs: 10_000, signal: new AbortController().signal, ...(env ? { env } : {}) });
      return `${outcome.output}[${outcome.signal ?? outcome.exitCode}]`;
    };
    const probe = 'echo "$0 $# ${BASH_ENV-no BASH_ENV}"; [ /dev/stdout -ef /dev/stderr ] && echo joined';
    expect(await run(probe)).toBe("bash 0 no BASH_ENV\njoined\n[0]");
    // A syntax error in the first line is bash's own message, in order; bash execs the last command.
    expect(await run("echo a)")).toBe("bash: -c: line 1: syntax error near unexpected token `)'\nbash: -c: line 1: `echo a)'\n[2]");
    expect(await run("echo ok\necho a)")).toBe("ok\nbash: -c: line 2: syntax error near unexpected token `)'\nbash: -c: line 2: `echo a)'\n[2]");
    expect(await run("sh -c 'kill -SEGV $$'")).toBe("[SIGSEGV]");
    expect(await run("echo \"[$_]\"", { ...process.env, _: "/from/parent" })).toBe("[/from/parent]\n[0]");
    // A BASH_ENV of the user's is kept; so is POSIX mode: stderr is joined all the same.
    const userEnv = join(dir, "user-env.bash");
    writeFileSync(userEnv, "export FROM_USER_ENV=yes\n");
    expect(await run(probe + '; echo "$FROM_USER_ENV"', { ...process.env, BASH_ENV: userEnv })).toBe(`bash 0 ${userEnv}\njoined\nyes\n[0]`);
    expect(await run(probe, { ...process.env, POSIXLY_CORRECT: "1" })).toBe("bash 0 no BASH_ENV\njoined\n[0]");
    // The file bash is pointed at lives in this user's 0700 folder of the temp folder, and is made
    // again when it vanished.
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = dir;
    try {
      const file = bashInvocation("true", process.env).env.BASH_ENV as string;
      expect(dirname(file)).toBe(join(dir, `tau-shell-${process.getuid?.() ?? 0}`));
      expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
      rmSync(file);
      expect(await run(probe)).toBe("bash 0 no BASH_ENV\njoined\n[0]");
      expect(existsSync(file)).toBe(true);
    } finally {
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
  });

  it("[shell.exec.kills-process-group] cancellation kills the shell and its background grandchild", async () => {
    const dir = tempDir();
    const controller = new AbortController();
    const pidFile = join(dir, "pid");
    // "started" is in the output pipe before the pid file exists, so the cancel cannot come first.
    const pending = shellTool.run({ command: `sleep 300 & echo started; echo $! > ${pidFile}; wait` }, context(dir, { signal: controller.signal }));
    const grandchild = Number(await waitForFile(pidFile));
    expect(processGone(grandchild)).toBe(false);
    controller.abort();
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).code).toBe("cancelled");
    expect((error as ToolError).message).toBe("started\n[cancelled; the command's process group was killed]");
    expect(processGone(grandchild)).toBe(true);
  });

  it("[shell.exec.kills-process-group] timeout kills the whole group, and SIGKILL follows SIGTERM after the grace period", async () => {
    const dir = tempDir();
    const pidFile = join(dir, "pid");
    const result = await shellTool.run({ command: `sleep 300 & echo $! > ${pidFile}; wait`, timeout_seconds: 1 }, context(dir));
    expect(result.output).toBe("(no output)\n[timed out after 1 s; the command's process group was killed]");
    expect(processGone(Number(readFileSync(pidFile, "utf8")))).toBe(true);

    // A grandchild that ignores SIGTERM is killed by the SIGKILL after SHELL_KILL_GRACE_MS.
    const stubborn = join(dir, "stubborn");
    const started = Date.now();
    const outcome = await runShell({
      command: `bash -c 'trap "" TERM; echo $$ > ${stubborn}; while :; do sleep 0.05; done' & wait`,
      cwd: dir,
      timeoutMs: 500,
      signal: new AbortController().signal,
    });
    expect(outcome.timedOut).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500 + limits.SHELL_KILL_GRACE_MS - 50);
    expect(processGone(Number(readFileSync(stubborn, "utf8")))).toBe(true);
  });

  it("[shell.exec.head-tail-truncation] 50 MB of output keeps head and tail with a marker, in bounded memory", async () => {
    const dir = tempDir();
    const total = 50_000_000;
    const outcome = await runShell({ command: `yes | head -c ${total}`, cwd: dir, timeoutMs: 60_000, signal: new AbortController().signal });
    expect(outcome.totalBytes).toBe(total);
    expect(outcome.truncated).toBe(true);
    expect(outcome.peakRetainedBytes).toBeLessThanOrEqual(HEAD + TAIL);
    expect(outcome.omittedBytes).toBe(total - HEAD - TAIL);
    expect(outcome.omittedLines).toBe((total - HEAD - TAIL) / 2);
    expect(outcome.output).toBe(
      `${"y\n".repeat(HEAD / 2)}[… output truncated: ${total - HEAD - TAIL} bytes (${(total - HEAD - TAIL) / 2} lines) omitted; ` +
        `showing the first ${HEAD} and the last ${TAIL} of ${total} bytes …]\n${"y\n".repeat(TAIL / 2)}`,
    );
  });

  it("[shell.exec.head-tail-truncation] real output exactly at, one below and one above HEAD+TAIL bytes", async () => {
    const dir = tempDir();
    for (const [size, cut] of [
      [HEAD + TAIL - 1, false],
      [HEAD + TAIL, false],
      [HEAD + TAIL + 1, true],
    ] as const) {
      const result = await shellTool.run({ command: `head -c ${size} /dev/zero | tr '\\0' a` }, context(dir));
      expect(result.output.includes("[… output truncated: 1 bytes (0 lines) omitted"), String(size)).toBe(cut);
      if (!cut) expect(result.output).toBe(`${"a".repeat(size)}\n[exit code 0]`);
    }
  });

  it("[shell.exec.no-secret-env] TAU_SECRET_* variables of the parent never reach the child", async () => {
    const dir = tempDir();
    process.env.TAU_SECRET_X = "hunter2-secret";
    process.env.TAU_SHELL_TEST_VISIBLE = "visible";
    try {
      const result = await shellTool.run({ command: "env" }, context(dir));
      expect(result.output).toContain("TAU_SHELL_TEST_VISIBLE=visible");
      expect(result.output).not.toContain("TAU_SECRET_");
      expect(result.output).not.toContain("hunter2-secret");
    } finally {
      delete process.env.TAU_SECRET_X;
      delete process.env.TAU_SHELL_TEST_VISIBLE;
    }
  });

  it("[shell.exec.progress-throttled] progress is throttled to SHELL_PROGRESS_INTERVAL_MS and bounded to SHELL_PROGRESS_MAX_BYTES", async () => {
    const dir = tempDir();
    const texts: string[] = [];
    const started = Date.now();
    let firstAt: number | undefined;
    await shellTool.run(
      { command: "for i in $(seq 1 12); do head -c 3000 /dev/zero | tr '\\0' x; echo \" $i\"; sleep 0.08; done" },
      context(dir, { onProgress: (text) => (firstAt ??= Date.now(), texts.push(text)) }),
    );
    const elapsed = Date.now() - started;
    expect(texts.length).toBeGreaterThanOrEqual(1);
    // The first report waits one interval (the clocks may disagree by a millisecond).
    expect((firstAt as number) - started).toBeGreaterThanOrEqual(limits.SHELL_PROGRESS_INTERVAL_MS - 1);
    expect(texts.length).toBeLessThanOrEqual(Math.ceil(elapsed / limits.SHELL_PROGRESS_INTERVAL_MS) + 1);
    for (const text of texts) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(limits.SHELL_PROGRESS_MAX_BYTES);
    // A command that ends sooner is reported by its result alone.
    const quick: string[] = [];
    expect((await shellTool.run({ command: "echo hi" }, context(dir, { onProgress: (text) => quick.push(text) }))).output).toBe("hi\n[exit code 0]");
    expect(quick).toEqual([]);
  });

  it("returns after the shell exits even when a background process keeps the output open", async () => {
    const dir = tempDir();
    const started = Date.now();
    const result = await shellTool.run({ command: "(sleep 3; echo late) & echo early" }, context(dir));
    expect(Date.now() - started).toBeLessThan(2500);
    expect(result.output).toBe("early\n[exit code 0]");
  });
});
