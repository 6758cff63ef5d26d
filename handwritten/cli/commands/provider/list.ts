// `tau provider list [--json]`: the configured provider profiles; never prints a key.
import { Command, Flags } from "@oclif/core";
import { ConfigError, resolveRoots } from "../../../config/index.js";
import { TauError, errorOptions } from "../../errors.js";
import { listProfiles } from "../../provider-profiles.js";
import { escapeForLine } from "../session/escape.js";

export default class ProviderList extends Command {
  static override summary = "List provider profiles: name, base URL, models and where the key is kept.";
  static override flags = { json: Flags.boolean({ description: "Print JSON." }) };

  async run(): Promise<void> {
    const { flags } = await this.parse(ProviderList);
    try {
      const rows = await listProfiles(resolveRoots().config);
      if (flags.json) return this.log(JSON.stringify(rows));
      if (rows.length === 0) return this.log("No provider profiles. Add one with `tau provider add NAME --base-url URL --model M --api-key-stdin`.");
      for (const r of rows) this.log(escapeForLine(`${r.name}  ${r.base_url}  ${r.models.join(",")}  key: ${r.key}`));
    } catch (err) {
      if (err instanceof ConfigError) this.error(err.message, errorOptions(new TauError("TAU-E0201", err.message)));
      throw err;
    }
  }
}
