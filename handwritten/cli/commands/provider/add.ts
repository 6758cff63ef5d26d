// `tau provider add NAME --base-url URL [--model M…] [--api-key-stdin | --no-api-key] [--force]`.
import { Args, Command, Flags } from "@oclif/core";
import { ConfigError, SecretError, closeMatches, profileNameProblem, resolveRoots } from "../../../config/index.js";
import { TauError, errorOptions, printError } from "../../errors.js";
import { addProfile, baseUrlProblem, checkEndpoint, modelList, readHiddenLine, readKeyFromStdin } from "../../provider-profiles.js";

/** Most models a profile names (its schema's bound). */
const MAX_PROFILE_MODELS = 64;

export default class ProviderAdd extends Command {
  static override summary = "Add a named OpenAI-compatible provider profile; its key is stored in a 0600 secret file.";
  static override description =
    "First asks the endpoint for its models (GET BASE_URL/models with the key, bounded in time and size, through the same " +
    "proxy and TLS policy as every provider call); only when it answers are harness.d/provider-NAME.yaml and the key " +
    "(secrets/provider-NAME, mode 0600) written, and a --model the endpoint does not list is warned about. " +
    "--no-check writes the profile without asking (a server that is not up yet, or has no model listing). " +
    "The key is read from standard input (--api-key-stdin) or, on a terminal, from a prompt that does not echo; " +
    "it is never taken as an argument. Models are addressed as NAME/MODEL.";
  static override examples = [
    'printf %s "$KEY" | <%= config.bin %> provider add work --base-url https://api.example.com/v1 --model gpt-4o,gpt-4o-mini --api-key-stdin',
    "<%= config.bin %> provider add local --base-url http://127.0.0.1:11434/v1 --model llama3 --no-api-key",
  ];
  static override args = { name: Args.string({ description: "Profile name (lowercase letters, digits, - or _).", required: true }) };
  static override flags = {
    "base-url": Flags.string({ description: "The endpoint's base URL (http:// or https://).", required: true }),
    model: Flags.string({
      description: "A model id; repeat the flag or give a comma list. The first is the profile's default. Without it, the models the endpoint lists (the first is the default).",
      multiple: true,
    }),
    api: Flags.string({
      description: "The wire API the endpoint speaks: chat_completions (POST /chat/completions, the default), responses (POST /responses) or chatgpt_ws (the Responses events over a WebSocket, signed in with `tau provider login NAME`; no key, no check).",
      options: ["chat_completions", "responses", "chatgpt_ws"],
    }),
    "auth-url": Flags.string({ description: "chatgpt_ws: the sign-in issuer (https://auth.openai.com when absent)." }),
    "api-key-stdin": Flags.boolean({ description: "Read the API key from standard input.", exclusive: ["no-api-key"] }),
    "no-api-key": Flags.boolean({ description: "The server needs no key." }),
    force: Flags.boolean({ description: "Replace an existing profile of the same name." }),
    "no-check": Flags.boolean({ description: "Do not ask the endpoint for its models before writing the profile." }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(ProviderAdd);
    const roots = resolveRoots();
    try {
      const bad = profileNameProblem(args.name) ?? baseUrlProblem(flags["base-url"]);
      if (bad) throw new ConfigError(bad);
      const ws = flags.api === "chatgpt_ws";
      if (flags["auth-url"] !== undefined && !ws) throw new ConfigError("--auth-url is for --api chatgpt_ws only");
      const authBad = flags["auth-url"] === undefined ? undefined : baseUrlProblem(flags["auth-url"]);
      if (authBad) throw new ConfigError(authBad.replace("--base-url", "--auth-url"));
      if (ws && flags["api-key-stdin"]) throw new ConfigError("chatgpt_ws takes no key: sign in with `tau provider login NAME` after adding the profile");
      let apiKey: string | undefined;
      if (flags["api-key-stdin"]) apiKey = await readKeyFromStdin();
      else if (!flags["no-api-key"] && !ws) {
        if (!process.stdin.isTTY) throw new ConfigError("give the key on standard input with --api-key-stdin (or --no-api-key for a server that needs none)");
        apiKey = await readHiddenLine(`API key for ${args.name} (input hidden): `);
      }
      const models = modelList(flags.model ?? []);
      if (models.length === 0 && (flags["no-check"] || ws)) throw new ConfigError(`give --model: ${ws ? "a chatgpt_ws profile is not checked" : "--no-check asks the endpoint nothing"}, so its models are not known`);
      if (!flags["no-check"] && !ws) {
        process.stderr.write(`checking ${flags["base-url"]} …\n`);
        const check = await checkEndpoint(flags["base-url"], apiKey);
        if (!check.ok) {
          const message = `the endpoint did not list its models: ${check.reason}; nothing was written. Check the URL and the key, or add the profile anyway with --no-check`;
          return this.exit(printError(new TauError("TAU-E0406", `tau: provider add: ${message}`)));
        }
        for (const m of models) {
          if (check.models.includes(m)) continue;
          const near = closeMatches(m, check.models);
          process.stderr.write(`warning: the endpoint does not list the model ${m}${near.length > 0 ? `; close matches: ${near.join(", ")}` : ""}\n`);
        }
        this.log(`the endpoint answered: ${check.models.length} model${check.models.length === 1 ? "" : "s"}`);
        // No --model: the models it lists, the first the profile's default.
        if (models.length === 0) {
          // Ids a profile can hold: one printable line each (the schema's bound checks the rest).
          const listed = check.models.filter((m) => m.length <= 256 && !/[\u0000-\u001f\u007f-\u009f]/.test(m));
          if (listed.length === 0) throw new ConfigError("the endpoint lists no models; give --model");
          models.push(...listed.slice(0, MAX_PROFILE_MODELS));
        }
      }
      const api = flags.api === "responses" || flags.api === "chatgpt_ws" ? { api: flags.api as "responses" | "chatgpt_ws" } : {};
      const r = await addProfile(roots.config, { name: args.name, baseUrl: flags["base-url"], models, apiKey, force: flags.force, ...api, ...(flags["auth-url"] !== undefined ? { authUrl: flags["auth-url"] } : {}) });
      this.log(`wrote ${r.dropIn}`);
      if (r.secret) this.log(`wrote ${r.secret} (mode 0600)`);
      this.log(`models: ${models.map((m) => `${args.name}/${m}`).join(", ")}`);
      if (ws) this.log(`sign in with: tau provider login ${args.name}`);
    } catch (err) {
      if (err instanceof ConfigError) this.error(err.message, errorOptions(new TauError("TAU-E0201", err.message)));
      if (err instanceof SecretError) this.error(err.message, errorOptions(new TauError("TAU-E0202", err.message)));
      throw err;
    }
  }
}
