// `tau provider remove NAME`: deletes the profile's drop-in and its key file.
import { Args, Command } from "@oclif/core";
import { ConfigError, resolveRoots } from "../../../config/index.js";
import { TauError, errorOptions } from "../../errors.js";
import { removeProfile } from "../../provider-profiles.js";

export default class ProviderRemove extends Command {
  static override summary = "Remove a provider profile added with `tau provider add` and its key file.";
  static override args = { name: Args.string({ description: "Profile name.", required: true }) };

  async run(): Promise<void> {
    const { args } = await this.parse(ProviderRemove);
    try {
      const r = removeProfile(resolveRoots().config, args.name);
      if (!r.dropIn && !r.secret) {
        const missing = new TauError("TAU-E0303", `no profile ${args.name} was added with \`tau provider add\`; tau provider list shows the profiles (those written in harness.yaml are edited there)`);
        this.error(missing.message, errorOptions(missing));
      }
      this.log(`removed provider profile ${args.name}`);
    } catch (err) {
      if (err instanceof ConfigError) this.error(err.message, errorOptions(new TauError("TAU-E0201", err.message)));
      throw err;
    }
  }
}
