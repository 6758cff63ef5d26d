// `tau run`'s arguments on its fast path. The client parses them, and so does a daemon that the `tau`
// launcher script started for the run in parallel (`tau daemon --for-run`): one parser, so both reach
// the same answer on whether the run goes ahead and with which daemon arguments. Flags mirror the
// oclif `run` command (which still serves `tau run --help`).
import { parseArgs } from "node:util";
import type { RunOptions } from "./run-daemon.js";

export interface RunArgs {
  /** The `-p` text (absent with `--prompt-stdin`, which the client reads itself). */
  readonly prompt?: string;
  readonly promptStdin: boolean;
  readonly options: RunOptions;
}

export type ParsedRunArgs = { readonly ok: true; readonly args: RunArgs } | { readonly ok: false; readonly message: string };

export const NO_PROMPT = "tau run: give a prompt with -p TEXT or --prompt-stdin (or a skill with --skill NAME)";

export function parseRunArgs(argv: readonly string[]): ParsedRunArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        prompt: { type: "string", short: "p" },
        "prompt-stdin": { type: "boolean" },
        json: { type: "boolean" },
        ephemeral: { type: "boolean" },
        model: { type: "string" },
        skill: { type: "string" },
        "harness-config": { type: "string", multiple: true },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    return { ok: false, message: `tau run: ${(err as Error).message}\nSee: tau run --help` };
  }
  const promptStdin = values["prompt-stdin"] === true;
  if (!promptStdin && missingPrompt(values.prompt, values.skill)) return { ok: false, message: NO_PROMPT };
  const options: RunOptions = {
    json: values.json === true,
    ...(values.skill !== undefined ? { skill: values.skill } : {}),
    ephemeral: values.ephemeral === true,
    ...(values.model ? { model: values.model } : {}),
    harnessConfig: values["harness-config"] ?? [],
  };
  return { ok: true, args: { ...(values.prompt !== undefined ? { prompt: values.prompt } : {}), promptStdin, options } };
}

/** A run needs prompt text, or a skill to stand for it. */
export function missingPrompt(prompt: string | undefined, skill: string | undefined): boolean {
  return skill === undefined && (prompt === undefined || prompt.trim() === "");
}

/** What the `tau` launcher script minted for the daemon it starts for a run (bin/tau.cjs). */
export interface EarlyLaunch {
  readonly sessionId: string;
  readonly instance: string;
}

/** A session id as tau mints one (`mintId("s")`), and as the script mints it. */
const SESSION_ID = /^s-[0-9a-z]{1,11}-[0-9a-f]{12}$/;
const INSTANCE = /^[0-9a-f]{16}$/;

/**
 * Reads `daemon --for-run SESSION_ID INSTANCE` at `at` in a command line: the daemon's own arguments,
 * or, seen by the client, the command line of the script's background child once it has become the
 * daemon (through `setsid`, so `at` is 2 or 3 there).
 */
export function parseEarlyLaunch(cmdline: readonly string[], at: number): EarlyLaunch | undefined {
  const [daemon, forRun, sessionId, instance] = cmdline.slice(at, at + 4);
  if (daemon !== "daemon" || forRun !== "--for-run") return undefined;
  if (sessionId === undefined || !SESSION_ID.test(sessionId) || instance === undefined || !INSTANCE.test(instance)) return undefined;
  return { sessionId, instance };
}
