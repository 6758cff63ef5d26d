// `tau init`: commented sample configuration files, written only where none exist.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const HARNESS_SAMPLE = `# tau harness configuration (see SPEC-configuration).
# Later layers win: this file, then harness.d/*.yaml in name order, then --harness-config KEY=VALUE.

# The model new agents use: "provider/model" or a model id. Without one, the default provider's:
# OPENAI_MODEL, else the first model its server lists (GET /models), else gpt-4o-mini.
# model: provider/gpt-4o-mini

# What is known of models, by id or "provider/model" (prices in USD per million tokens); it
# overrides tau's built-in table of well-known models.
# model_info:
#   gpt-4o: { context_window: 128000, max_output_tokens: 16384, input_cost: 2.5, output_cost: 10, cached_input_cost: 1.25 }

# Named OpenAI-compatible endpoints: add them with
#   printf %s "$KEY" | tau provider add work --base-url https://api.example.com/v1 --model gpt-4o --api-key-stdin
# which writes harness.d/provider-work.yaml and the key into secrets/provider-work (mode 0600).

# Extensions. Leave this out to run the defaults: the provider (OPENAI_BASE_URL, or the offline
# demo) and the shell tools. Listing extensions replaces the defaults.
# extensions:
#   - name: provider
#     kind: provider
#     require: true
#     command: ["tau", "ext", "provider"]
#     config:
#       profile: chat_completions
#       base_url: https://api.example.com/v1
#       models: [{ id: gpt-4o-mini, context_window: 128000 }]   # optional: the server's list is asked for
#       # list_models: false   # never ask the server for its models (GET /models)
#       api_key_secret: openai-api-key
#     secrets: [openai-api-key]        # from TAU_SECRET_OPENAI_API_KEY or secrets/openai-api-key (0600)
#   - name: shell
#     command: ["tau", "ext", "shell"]
#     # prefix: ["bwrap", "--ro-bind", "/", "/", "--"]   # run it inside a wrapper
#     # call_tools: ["read"]   # tools this extension may call itself (none by default; "*" for any)

# Web search and fetch for the model (SPEC-web): web_fetch needs no key; web_search needs Exa's
# or Parallel's, in secrets/web-exa or secrets/web-parallel (mode 0600). Pages are fetched only
# from hosts sandbox.yaml's network policy allows, or that you allow when asked.
# web:
#   search: exa        # or parallel
#   fetch: direct      # the default; or exa, parallel

debug_log:
  enable: true
  retention_days: 14
`;

export const CLI_SAMPLE = `# tau's interactive UI (tau, tau attach, tau resume); every key is optional.
# The theme: default, or the name of a file in the themes/ folder beside this one (:theme lists them).
# theme: default
editor:
  # Most screen rows the prompt editor takes; a longer draft scrolls within them.
  max_lines: 20
  # Most prompt-history entries offered by Up and Ctrl-R (0: none).
  history_size: 1000
# Keys of the UI's actions: escape, ctrl-LETTER, alt-LETTER, or none. Keys the editor uses
# (ctrl-a, ctrl-r, …) are refused, and so is a key bound twice. The defaults:
# keys:
#   interrupt: escape
#   expand_tool_output: ctrl-o
#   redraw: ctrl-l
#   history_page: alt-h
#   next_agent: alt-n
`;

export interface InitOutcome {
  readonly written: string[];
  readonly kept: string[];
}

/** Writes each sample whose file does not exist yet; never overwrites. */
export function initConfig(configRoot: string): InitOutcome {
  mkdirSync(configRoot, { recursive: true, mode: 0o700 });
  const outcome: InitOutcome = { written: [], kept: [] };
  for (const [name, text] of [
    ["harness.yaml", HARNESS_SAMPLE],
    ["cli.yaml", CLI_SAMPLE],
  ] as const) {
    const path = join(configRoot, name);
    if (existsSync(path)) {
      outcome.kept.push(path);
      continue;
    }
    writeFileSync(path, text, { mode: 0o600, flag: "wx" });
    outcome.written.push(path);
  }
  return outcome;
}
