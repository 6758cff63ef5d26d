// `tau run`, the headless run: its flags (flags.ts) and their parser (args.ts), the owned daemon it
// starts or adopts (daemon.ts) and reaches (reach.ts), the run of one prompt (prompt.ts) following
// its agent's events (follow.ts), what it prints (the printers, output.ts) and how it ends (ends.ts).
// The fast path's bundles start from main.ts, prompt.ts and config.ts directly (build.ts), so each
// loads only the files it needs; everything else outside this folder imports from here.
export {
  NO_PROMPT,
  STDIN_PROMPT_MAX_BYTES,
  STDIN_TOO_LARGE,
  TWO_PROMPTS,
  headlessPrompt,
  parseEarlyLaunch,
  parseRunArgs,
  readPromptStdin,
  withPipedInput,
  runArgsOf,
  type EarlyLaunch,
  type ParsedRunArgs,
  type RunArgs,
  type RunPrompt,
  type RunRefusal,
} from "./args.js";
export { EPHEMERAL_FLAG, RUN_FLAGS, type RunFlag, type RunFlagName, type RunFlagValues } from "./flags.js";
export type { RunOptions } from "./daemon.js";
export { PROVIDER_WAIT_MS, runPrompt } from "./prompt.js";
export { COMPLETED, RUN_STREAM_VERSION, closingLine, endWith, exitCodeOfEnd, type RunEnd, type RunStatus } from "./ends.js";
export type { RunPrinter } from "./printer.js";
export { RunJsonPrinter } from "./json-printer.js";
export { RunTextPrinter } from "./text-printer.js";
