// The `shell` tool: `bash -c <command>` in its own process group, bounded output, timeout and
// cancellation that end the whole group (SPEC-shell-tools).
import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve as absolutePath } from "node:path";
import {
  SHELL_DEFAULT_TIMEOUT_SECONDS,
  SHELL_KILL_GRACE_MS,
  SHELL_MAX_COMMAND_CHARS,
  SHELL_MAX_TIMEOUT_SECONDS,
  SHELL_MIN_TIMEOUT_SECONDS,
  SHELL_OUTPUT_HEAD_BYTES,
  SHELL_OUTPUT_TAIL_BYTES,
  SHELL_POST_EXIT_DRAIN_MS,
  SHELL_PROGRESS_INTERVAL_MS,
  SHELL_PROGRESS_MAX_BYTES,
} from "./limits.js";
import { withoutSecrets } from "../../../config/index.js";
import { ensureRuntimeDir } from "../../../transport/runtime-dir.js";
import { ToolError, throwIfCancelled } from "./errors.js";
import { forgetEmptyGroups, groupAlive, killGroup, trackGroup } from "./process-groups.js";
import { defineParameters, validateArgs } from "./schema.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";
import { builtin } from "../../../startup/builtin.js";

/** node:child_process, loaded at the first command (the extension preloads it once it is ready). */
const childProcess = (): typeof import("node:child_process") => builtin("child_process");

// ---- bounded output ----------------------------------------------------------------------------

function countNewlines(bytes: Uint8Array): number {
  let count = 0;
  for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) count++;
  return count;
}

/** Index just past the last complete UTF-8 sequence of `bytes`. */
function completeUtf8End(bytes: Uint8Array): number {
  const length = bytes.length;
  for (let back = 1; back <= Math.min(4, length); back++) {
    const byte = bytes[length - back] as number;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? length - back : length;
  }
  return length;
}

/** Index of the first byte of `bytes` that is not a UTF-8 continuation byte (at most 3 skipped). */
function utf8Start(bytes: Uint8Array): number {
  let i = 0;
  while (i < Math.min(3, bytes.length) && ((bytes[i] as number) & 0xc0) === 0x80) i++;
  return i;
}

/**
 * The output a command wrote since its last progress report: each report carries only what is new
 * (a UI appends it), the newest SHELL_PROGRESS_MAX_BYTES of it when more came, cut on whole UTF-8
 * characters (an incomplete last one waits for the next report). Never more than twice the bound is held.
 */
export class ProgressDelta {
  private chunks: Buffer[] = [];
  private bytes = 0;
  /** Whether older bytes were let go, so the held ones may start inside a character. */
  private cut = false;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    if (this.bytes > 2 * this.maxBytes) this.keepNewest();
  }

  /** What is new since the last take ("" when nothing whole is). */
  take(): string {
    this.keepNewest();
    const all = Buffer.concat(this.chunks);
    const start = this.cut ? utf8Start(all) : 0;
    this.cut = false;
    const end = completeUtf8End(all);
    this.chunks = end < all.length ? [Buffer.from(all.subarray(end))] : [];
    this.bytes = all.length - end;
    return all.subarray(start, Math.max(start, end)).toString("utf8");
  }

  private keepNewest(): void {
    if (this.bytes <= this.maxBytes) return;
    const all = Buffer.concat(this.chunks);
    this.chunks = [Buffer.from(all.subarray(all.length - this.maxBytes))];
    this.bytes = this.maxBytes;
    this.cut = true;
  }
}

export interface CollectedOutput {
  text: string;
  truncated: boolean;
  totalBytes: number;
  omittedBytes: number;
  omittedLines: number;
}

/**
 * Keeps the first `headLimit` bytes and a rolling window of the last `tailLimit` bytes of a stream;
 * everything in between is counted and dropped as it arrives, so memory stays bounded however
 * much the command prints.
 */
export class HeadTailBuffer {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private newlines = 0;
  /** Every byte pushed. */
  totalBytes = 0;
  /** The most bytes held at once (head + tail), for tests of the memory bound. */
  peakRetainedBytes = 0;

  constructor(
    readonly headLimit: number = SHELL_OUTPUT_HEAD_BYTES,
    readonly tailLimit: number = SHELL_OUTPUT_TAIL_BYTES,
  ) {}

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.totalBytes += chunk.length;
    this.newlines += countNewlines(chunk);
    let rest = chunk;
    if (this.headBytes < this.headLimit) {
      const take = Math.min(this.headLimit - this.headBytes, rest.length);
      this.head.push(Buffer.from(rest.subarray(0, take)));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length > 0) {
      if (rest.length >= this.tailLimit) {
        this.tail = [Buffer.from(rest.subarray(rest.length - this.tailLimit))];
        this.tailBytes = this.tailLimit;
      } else {
        this.tail.push(Buffer.from(rest));
        this.tailBytes += rest.length;
        while (this.tailBytes > this.tailLimit) {
          const first = this.tail[0] as Buffer;
          const excess = this.tailBytes - this.tailLimit;
          if (first.length <= excess) {
            this.tail.shift();
            this.tailBytes -= first.length;
          } else {
            this.tail[0] = Buffer.from(first.subarray(excess));
            this.tailBytes -= excess;
          }
        }
      }
    }
    this.peakRetainedBytes = Math.max(this.peakRetainedBytes, this.headBytes + this.tailBytes);
  }

  /** The most recent output, at most `maxBytes` bytes, as text. */
  recent(maxBytes: number): string {
    const contiguous = this.totalBytes === this.headBytes + this.tailBytes;
    const all = Buffer.concat(contiguous ? [...this.head, ...this.tail] : this.tail);
    const slice = all.subarray(Math.max(0, all.length - maxBytes));
    return slice.subarray(all.length > maxBytes ? utf8Start(slice) : 0).toString("utf8");
  }

  finish(): CollectedOutput {
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    const omitted = this.totalBytes - head.length - tail.length;
    if (omitted === 0) {
      return { text: Buffer.concat([head, tail]).toString("utf8"), truncated: false, totalBytes: this.totalBytes, omittedBytes: 0, omittedLines: 0 };
    }
    const headKept = head.subarray(0, completeUtf8End(head));
    const tailKept = tail.subarray(utf8Start(tail));
    const omittedBytes = this.totalBytes - headKept.length - tailKept.length;
    const omittedLines = this.newlines - countNewlines(headKept) - countNewlines(tailKept);
    const headText = headKept.toString("utf8");
    const marker =
      `[… output truncated: ${omittedBytes} bytes (${omittedLines} lines) omitted; ` +
      `showing the first ${headKept.length} and the last ${tailKept.length} of ${this.totalBytes} bytes …]`;
    const text = `${headText}${headText.endsWith("\n") || headText === "" ? "" : "\n"}${marker}\n${tailKept.toString("utf8")}`;
    return { text, truncated: true, totalBytes: this.totalBytes, omittedBytes, omittedLines };
  }
}

// ---- running a command -------------------------------------------------------------------------

export interface ShellRunOptions {
  command: string;
  cwd: string;
  timeoutMs: number;
  signal: AbortSignal;
  onProgress?: (text: string) => void;
  /** Parent environment to derive the child's from (default `process.env`); secrets are removed. */
  env?: NodeJS.ProcessEnv;
  /**
   * A sandbox's wrapped form of the command (a shell command line that starts the sandbox and runs
   * `command` inside it): run instead of `bash -c command`, stderr joined to stdout by the bash that
   * runs it, before anything else.
   */
  wrapped?: string;
  /** Overrides of the output bounds (tests only). */
  headBytes?: number;
  tailBytes?: number;
}

export interface ShellOutcome {
  /** Combined stdout and stderr, in the order produced, truncated in the middle when too long. */
  output: string;
  exitCode: number | null;
  /** The signal that ended the shell, if any. */
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  truncated: boolean;
  totalBytes: number;
  omittedBytes: number;
  omittedLines: number;
  peakRetainedBytes: number;
  /** The process group id (the shell's pid). */
  pid: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ---- starting bash -----------------------------------------------------------------------------

/**
 * Sourced through BASH_ENV before bash reads its `-c` command: joins stderr to stdout and takes
 * BASH_ENV out of the environment again. It runs as a function called with `$_`, which is gone
 * afterwards, so the command starts with `$_` as a plain `bash -c` has it.
 */
const JOIN_STDERR_SCRIPT =
  "__tau_join_stderr() { exec 2>&1; unset -v BASH_ENV; unset -f __tau_join_stderr; }\n" + '__tau_join_stderr "$_"\n';
/**
 * Named by its content (FNV-1a, enough to tell versions apart), so tau versions side by side never
 * read each other's; computed without node:crypto, which would cost the extension's start-up ~7 ms.
 */
const JOIN_STDERR_NAME = `join-stderr-${fnv1a(JOIN_STDERR_SCRIPT)}.bash`;

function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
}

/** The file this process last found or wrote JOIN_STDERR_SCRIPT in. */
let joinStderrFile: string | undefined;

function readIfThere(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * The file holding JOIN_STDERR_SCRIPT in this user's folder of the temp folder (0700 and ours, else
 * it is not used): checked once per process, written when missing or different, and again when it
 * vanished; undefined when it cannot be had safely.
 */
function joinStderrScript(): string | undefined {
  const dir = join(absolutePath(tmpdir()), `tau-shell-${process.getuid?.() ?? 0}`);
  const file = join(dir, JOIN_STDERR_NAME);
  if (file === joinStderrFile && existsSync(file)) return file;
  joinStderrFile = undefined;
  // bash expands BASH_ENV as if in double quotes: a path that expansion would change is not used.
  if (/[$`\\"]/.test(file)) return undefined;
  const temp = `${file}.${process.pid}.tmp`;
  try {
    ensureRuntimeDir(dir);
    if (readIfThere(file) !== JOIN_STDERR_SCRIPT) {
      writeFileSync(temp, JOIN_STDERR_SCRIPT, { mode: 0o600 });
      renameSync(temp, file);
    }
  } catch {
    try {
      rmSync(temp, { force: true });
    } catch {
      // Nothing more to do: the outer-bash form is used.
    }
    return undefined;
  }
  joinStderrFile = file;
  return file;
}

/**
 * The arguments and environment that run `bash -c command` with stderr joined to stdout. Node cannot
 * give a child one pipe as both fd 1 and fd 2, so bash joins them itself, and must do so before it
 * parses the command: then even a syntax error in the first line is in order, and `$0`, positional
 * parameters, line numbers, error messages and bash's exec of the last command are those of a plain
 * `bash -c command`. A non-interactive bash sources the file named by BASH_ENV first, so one bash
 * does it all. Where that file would not be read (the environment has a BASH_ENV of its own, bash
 * would start in POSIX mode or privileged) or cannot be had, an outer bash joins the two and execs
 * the real one instead: the same outcome, for one more bash start-up.
 */
export function bashInvocation(command: string, env: NodeJS.ProcessEnv): { args: string[]; env: NodeJS.ProcessEnv } {
  const posix = env.POSIXLY_CORRECT !== undefined || /(^|:)posix(:|$)/.test(env.SHELLOPTS ?? "");
  const privileged = process.getuid?.() !== process.geteuid?.() || process.getgid?.() !== process.getegid?.();
  const script = env.BASH_ENV === undefined && !posix && !privileged ? joinStderrScript() : undefined;
  if (script !== undefined) return { args: ["-c", command], env: { ...env, BASH_ENV: script } };
  return { args: ["-c", 'exec bash -c "$1" 2>&1', "bash", command], env };
}

/** Settles when `promise` does or after `ms`, whichever is first; the timer never outlives it. */
async function settleWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `bash -c command` in a new process group. The shell's stderr is joined to its stdout (one
 * pipe, so the order of writes is kept). On timeout or cancellation the whole group gets SIGTERM,
 * then SIGKILL after `SHELL_KILL_GRACE_MS`; the promise settles once the group is gone. After a
 * normal exit, background processes keep running but their output is read only for
 * `SHELL_POST_EXIT_DRAIN_MS` more.
 */
/**
 * The command's output into `buffer`, and its recent part to `onProgress` at most once an interval.
 * The first report comes no sooner than one interval after the start: a command that ends sooner
 * is reported by its result alone.
 */
function progressReporter(buffer: HeadTailBuffer, onProgress: ((text: string) => void) | undefined): { onData(chunk: Buffer): void; stop(): void } {
  let progressTimer: NodeJS.Timeout | undefined;
  // The first report comes no sooner than one interval after the start: a command that ends
  // sooner is reported by its result alone.
  let lastProgress = Date.now();
  const delta = new ProgressDelta(SHELL_PROGRESS_MAX_BYTES);
  const emitProgress = (): void => {
    progressTimer = undefined;
    lastProgress = Date.now();
    const text = delta.take();
    if (text === "") return;
    try {
      onProgress?.(text);
    } catch {
      // A failing progress sink never affects the command.
    }
  };
  return {
    onData(chunk: Buffer): void {
      buffer.push(chunk);
      if (onProgress === undefined) return;
      delta.push(chunk);
      if (progressTimer !== undefined) return;
      const wait = lastProgress + SHELL_PROGRESS_INTERVAL_MS - Date.now();
      progressTimer = setTimeout(emitProgress, Math.max(0, wait));
    },
    stop(): void {
      if (progressTimer !== undefined) clearTimeout(progressTimer);
    },
  };
}

/** What a finished command comes to: its collected output and how it ended. */
function outcomeOf(buffer: HeadTailBuffer, end: { exitCode: number | null; signal: NodeJS.Signals | null; reason: "timeout" | "cancel" | undefined; pid: number }): ShellOutcome {
  const collected = buffer.finish();
  return {
    output: collected.text,
    exitCode: end.exitCode,
    signal: end.signal,
    timedOut: end.reason === "timeout",
    cancelled: end.reason === "cancel",
    truncated: collected.truncated,
    totalBytes: collected.totalBytes,
    omittedBytes: collected.omittedBytes,
    omittedLines: collected.omittedLines,
    peakRetainedBytes: buffer.peakRetainedBytes,
    pid: end.pid,
  };
}

export function runShell(options: ShellRunOptions): Promise<ShellOutcome> {
  const buffer = new HeadTailBuffer(options.headBytes, options.tailBytes);
  return new Promise<ShellOutcome>((resolve, reject) => {
    const env = withoutSecrets(options.env ?? process.env);
    const bash = options.wrapped === undefined ? bashInvocation(options.command, env) : { args: ["-c", `exec 2>&1\n${options.wrapped}`], env };
    const child = childProcess().spawn("bash", bash.args, {
      cwd: options.cwd,
      env: bash.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const pid = child.pid;
    if (pid === undefined) {
      child.once("error", (error) => reject(new ToolError("failed", `Cannot start bash: ${error.message}.`)));
      return;
    }
    // Ended with the others if this extension's harness goes away (process-groups.ts).
    trackGroup(pid);
    let reason: "timeout" | "cancel" | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    const progress = progressReporter(buffer, options.onProgress);
    child.stdout.on("data", progress.onData);
    child.stderr.on("data", progress.onData);
    const streamsClosed = Promise.all([
      new Promise<void>((r) => child.stdout.once("close", () => r())),
      new Promise<void>((r) => child.stderr.once("close", () => r())),
    ]);

    const terminate = (why: "timeout" | "cancel"): void => {
      if (reason !== undefined) return;
      reason = why;
      killGroup(pid, "SIGTERM");
      killTimer = setTimeout(() => killGroup(pid, "SIGKILL"), SHELL_KILL_GRACE_MS);
    };
    const timeout = setTimeout(() => terminate("timeout"), options.timeoutMs);
    const onAbort = (): void => terminate("cancel");
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener("abort", onAbort, { once: true });

    child.once("error", (error) => {
      // Only reachable if the shell could not be started after all; the exit handler never runs.
      clearTimeout(timeout);
      options.signal.removeEventListener("abort", onAbort);
      reject(new ToolError("failed", `Cannot start bash: ${error.message}.`));
    });
    child.once("exit", (code, signal) => {
      void (async () => {
        clearTimeout(timeout);
        options.signal.removeEventListener("abort", onAbort);
        await settleWithin(streamsClosed, SHELL_POST_EXIT_DRAIN_MS);
        child.stdout.destroy();
        child.stderr.destroy();
        if (reason !== undefined) {
          // Wait until every member of the group is gone (SIGKILL follows at the grace deadline).
          const deadline = Date.now() + SHELL_KILL_GRACE_MS + 1_000;
          while (groupAlive(pid) && Date.now() < deadline) await sleep(20);
        }
        if (killTimer !== undefined) clearTimeout(killTimer);
        progress.stop();
        forgetEmptyGroups();
        resolve(outcomeOf(buffer, { exitCode: code, signal, reason, pid }));
      })();
    });
  });
}

// ---- the tool ----------------------------------------------------------------------------------

const parameters = defineParameters({
  type: "object",
  properties: {
    command: {
      type: "string",
      description: "The bash command line to run (bash -c) in the working directory.",
      minLength: 1,
      maxLength: SHELL_MAX_COMMAND_CHARS,
    },
    timeout_seconds: {
      type: "integer",
      description: `Seconds before the command and everything it started are killed (default ${SHELL_DEFAULT_TIMEOUT_SECONDS}).`,
      minimum: SHELL_MIN_TIMEOUT_SECONDS,
      maximum: SHELL_MAX_TIMEOUT_SECONDS,
      default: SHELL_DEFAULT_TIMEOUT_SECONDS,
    },
  },
  required: ["command"],
  additionalProperties: false,
});

interface ShellArgs {
  command: string;
  timeout_seconds?: number;
}

/** Whether a command succeeded: it exited 0 (a non-zero exit, a signal or a timeout is a failed call). */
export function shellSucceeded(outcome: ShellOutcome): boolean {
  return !outcome.exitCode && outcome.exitCode !== null && outcome.signal === null && !outcome.timedOut && !outcome.cancelled;
}

/** The closing status line of a `shell` result; the timeout as seconds, or in words (a sandbox replay's remaining time). */
export function shellStatus(outcome: ShellOutcome, timeout: number | string): string {
  if (outcome.timedOut) return `[timed out after ${typeof timeout === "number" ? `${timeout} s` : timeout}; the command's process group was killed]`;
  if (outcome.cancelled) return "[cancelled; the command's process group was killed]";
  if (outcome.signal !== null) return `[killed by signal ${outcome.signal}]`;
  return `[exit code ${outcome.exitCode ?? "unknown"}]`;
}

export const shellTool: Tool = {
  name: "shell",
  description:
    "Run a bash command in the working directory and return its combined stdout and stderr with the exit code. " +
    `Output over ${SHELL_OUTPUT_HEAD_BYTES + SHELL_OUTPUT_TAIL_BYTES} bytes keeps its first ${SHELL_OUTPUT_HEAD_BYTES} and last ` +
    `${SHELL_OUTPUT_TAIL_BYTES} bytes. Stdin is closed. Background processes keep running after the command ends, ` +
    "until the session ends, but their output is not captured: redirect it to a file.",
  parameters,
  async run(args: unknown, ctx: ToolContext): Promise<ToolResult> {
    const { command, timeout_seconds } = validateArgs<ShellArgs>("shell", parameters, args);
    throwIfCancelled(ctx.signal);
    const timeoutSeconds = timeout_seconds ?? SHELL_DEFAULT_TIMEOUT_SECONDS;
    // Synchronous, as in resolveWorkdir: no thread-pool round trip before the spawn.
    let info;
    try {
      info = statSync(ctx.cwd);
    } catch {
      info = undefined;
    }
    if (info === undefined || !info.isDirectory()) {
      throw new ToolError("failed", `The working directory ${ctx.cwd} does not exist or is not a directory.`);
    }
    const outcome = await runShell({
      command,
      cwd: ctx.cwd,
      timeoutMs: timeoutSeconds * 1000,
      signal: ctx.signal,
      ...(ctx.onProgress === undefined ? {} : { onProgress: (text: string) => ctx.onProgress?.(text) }),
    });
    return shellResult(command, outcome, timeoutSeconds);
  },
};

/** The output and exit status of a finished command, as the model reads them. */
export function shellBody(outcome: ShellOutcome, timeoutSeconds: number | string): string {
  const body = outcome.output === "" ? "(no output)\n" : outcome.output.endsWith("\n") ? outcome.output : `${outcome.output}\n`;
  return `${body}${shellStatus(outcome, timeoutSeconds)}`;
}

/** A `shell` result (a cancelled command is a `cancelled` ToolError carrying its output). */
export function shellResult(command: string, outcome: ShellOutcome, timeoutSeconds: number | string, prefix = "", suffix = ""): ToolResult {
  const status = shellStatus(outcome, timeoutSeconds);
  const output = `${prefix}${shellBody(outcome, timeoutSeconds)}${suffix}`;
  if (outcome.cancelled) throw new ToolError("cancelled", output);
  const firstLine = command.split("\n", 1)[0] ?? "";
  return {
    output,
    display: { title: firstLine.length > 200 ? `${firstLine.slice(0, 199)}…` : firstLine, summary: status.slice(1, -1) },
    ...(shellSucceeded(outcome) ? {} : { failed: true }),
  };
}

/** The `shell` tool's arguments, checked against its schema (the sandbox runs the same tool). */
export function shellArgs(args: unknown): { command: string; timeoutSeconds: number } {
  const { command, timeout_seconds } = validateArgs<ShellArgs>("shell", parameters, args);
  return { command, timeoutSeconds: timeout_seconds ?? SHELL_DEFAULT_TIMEOUT_SECONDS };
}
