// `tau run -p "…"`: one prompt to completion, headless. Starts a daemon it owns (which exits when
// this client leaves), prints the answer (or, with --json, every event as a JSON line and a closing
// line), and exits with the status of how the run ended (run/ends.ts, SPEC-cli-manners).
// bin/tau.cjs answers `tau run` on its fast path (run/main.ts); this command serves `tau run --help`
// and the docs site, with its flags made from the same table (run/flags.ts).
import { Args, Command } from "@oclif/core";
import { TauError, errorOptions } from "../errors.js";
import { oclifFlags, type OclifFlags } from "../oclif-flags.js";
import { NO_PROMPT, RUN_FLAGS, readPromptStdin, runArgsOf, runPrompt, withPipedInput } from "../run/index.js";

/** The command framework's flags, one per row of RUN_FLAGS. */
export function oclifRunFlags(): OclifFlags<typeof RUN_FLAGS> {
  return oclifFlags(RUN_FLAGS);
}

export default class Run extends Command {
  static override summary = "Run one prompt to completion and print the answer.";
  static override description =
    "Starts a session daemon, creates an agent, submits the prompt and waits for the outer turn to finish. With no model configured, an offline scripted demo answers.";
  static override examples = [
    '<%= config.bin %> run "list the files here"',
    '<%= config.bin %> run -p "list the files here" --json',
    'git diff | <%= config.bin %> run',
    'echo "fix the test" | <%= config.bin %> run --prompt-stdin --json',
    '<%= config.bin %> run --skill release-notes -p "for v1.2"',
  ];
  static override args = {
    prompt: Args.string({ description: "The prompt text (the same as -p TEXT); - reads it from standard input, as piped text with no prompt is." }),
  };
  static override flags = oclifRunFlags();

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Run);
    const parsed = runArgsOf(flags, args.prompt);
    if (!parsed.ok) throw this.refuse(new TauError(parsed.code, parsed.message));
    let { prompt, options } = parsed.args;
    if (parsed.args.promptStdin === "if-piped" && process.stdin.isTTY === true) throw this.refuse(new TauError("TAU-E0102", NO_PROMPT));
    if (parsed.args.promptStdin !== "no") {
      const read = readPromptStdin(options.skill);
      if (!read.ok) throw this.refuse(new TauError(read.code, read.message));
      prompt = read.prompt;
      if (read.skill !== undefined) options = { ...options, skill: read.skill };
    } else {
      const piped = withPipedInput(prompt);
      if (!piped.ok) throw this.refuse(new TauError(piped.code, piped.message));
      prompt = piped.prompt;
    }
    process.exitCode = await runPrompt(prompt ?? { text: "", literal: false }, options);
  }

  /** The command framework prints its own `Error:` line, so the message goes without its `tau run: `. */
  private refuse(err: TauError): never {
    this.error(err.message.replace(/^tau run: /, ""), errorOptions(err));
  }
}
