// `tau provider login NAME`: signs a chatgpt_ws profile in with ChatGPT (device code, or --browser).
import { Args, Command, Flags } from "@oclif/core";
import { ConfigError, resolveRoots } from "../../../config/index.js";
import { TauError, errorOptions, printError } from "../../errors.js";
import { loginProfile } from "../../provider-profiles.js";

export default class ProviderLogin extends Command {
  static override summary = "Sign a chatgpt_ws provider profile in with ChatGPT (device code, or --browser); its tokens are stored in a 0600 file.";
  static override description =
    "Asks the sign-in issuer for a one-time code, shows where to enter it, and waits (15 minutes at most) until it is entered; " +
    "with --browser, opens the issuer's sign-in page in a browser on this machine instead and takes its redirect on the loopback (port 1455 unless --port). " +
    "The tokens are then written to secrets/provider-NAME-oauth (mode 0600) and refreshed by the provider when they expire. " +
    "No token is ever printed. Every request goes out under the same proxy and TLS policy as provider calls.";
  static override examples = ["<%= config.bin %> provider login chatgpt", "<%= config.bin %> provider login chatgpt --browser"];
  static override args = { name: Args.string({ description: "Profile name (added with --api chatgpt_ws).", required: true }) };
  static override flags = {
    browser: Flags.boolean({ description: "Sign in through a browser on this machine (a redirect to the loopback) instead of a device code.", default: false }),
    port: Flags.integer({ description: "The loopback port of the browser sign-in's redirect (the issuer must accept it).", min: 0, max: 65535, dependsOn: ["browser"] }),
    open: Flags.boolean({ description: "Open the browser sign-in's address (--no-open only shows it).", default: true, allowNo: true }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(ProviderLogin);
    try {
      const r = await loginProfile(resolveRoots().config, args.name, { browser: flags.browser, open: flags.open, ...(flags.port !== undefined ? { port: flags.port } : {}) });
      if (!r.ok) return this.exit(printError(new TauError("TAU-E0407", `tau: provider login: ${r.reason}; the sign-in file was not written`)));
      this.log(`signed in; wrote ${r.file} (mode 0600)`);
    } catch (err) {
      if (err instanceof ConfigError) this.error(err.message, errorOptions(new TauError("TAU-E0201", err.message)));
      throw err;
    }
  }
}
