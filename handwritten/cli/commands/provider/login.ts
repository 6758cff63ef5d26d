// `tau provider login NAME`: signs a chatgpt_ws profile in with ChatGPT (device code).
import { Args, Command } from "@oclif/core";
import { ConfigError, resolveRoots } from "../../../config/index.js";
import { TauError, errorOptions, printError } from "../../errors.js";
import { loginProfile } from "../../provider-profiles.js";

export default class ProviderLogin extends Command {
  static override summary = "Sign a chatgpt_ws provider profile in with ChatGPT (device code); its tokens are stored in a 0600 file.";
  static override description =
    "Asks the sign-in issuer for a one-time code, shows where to enter it, and waits (15 minutes at most) until it is entered; " +
    "the tokens are then written to secrets/provider-NAME-oauth (mode 0600) and refreshed by the provider when they expire. " +
    "No token is ever printed. Every request goes out under the same proxy and TLS policy as provider calls.";
  static override examples = ["<%= config.bin %> provider login chatgpt"];
  static override args = { name: Args.string({ description: "Profile name (added with --api chatgpt_ws).", required: true }) };

  async run(): Promise<void> {
    const { args } = await this.parse(ProviderLogin);
    try {
      const r = await loginProfile(resolveRoots().config, args.name);
      if (!r.ok) return this.exit(printError(new TauError("TAU-E0407", `tau: provider login: ${r.reason}; the sign-in file was not written`)));
      this.log(`signed in; wrote ${r.file} (mode 0600)`);
    } catch (err) {
      if (err instanceof ConfigError) this.error(err.message, errorOptions(new TauError("TAU-E0201", err.message)));
      throw err;
    }
  }
}
