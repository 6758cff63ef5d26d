// `tau swarm key NAME`: an Iroh endpoint key in secret NAME (made when absent), and its endpoint id.
import { Args, Command } from "@oclif/core";
import { SECRET_NAME, readSecret, resolveRoots, writeSecret } from "../../../config/index.js";
import { endpointIdOfKey, generateKey, keyProblem } from "../../../swarm/index.js";
import { TauError, errorOptions } from "../../errors.js";

export default class SwarmKey extends Command {
  static override summary = "Print the endpoint id of the swarm key in secret NAME, making the key first when there is none.";
  static override description =
    "The key (64 hex digits) is written to <config>/secrets/NAME (mode 0600) and never printed. A coordinator's key is given to `tau swarm serve --key NAME`; " +
    "a worker's to its swarm extension entry (`key_secret`, and NAME under `secrets:`). The printed endpoint id is what the other side pins.";
  static override examples = ["<%= config.bin %> swarm key swarm-coordinator", "<%= config.bin %> swarm key swarm-key"];
  static override args = { name: Args.string({ description: "Secret name: lowercase letters, digits, - and _.", required: true }) };

  async run(): Promise<void> {
    const { args } = await this.parse(SwarmKey);
    try {
      if (!SECRET_NAME.test(args.name)) throw new TauError("TAU-E0201", `${JSON.stringify(args.name.slice(0, 80))} is not a secret name (lowercase letters, digits, - and _)`);
      const config = resolveRoots().config;
      let key = readSecret(config, args.name)?.trim();
      if (key === undefined) writeSecret(config, args.name, (key = await generateKey()));
      const problem = keyProblem(key);
      if (problem !== undefined) throw new TauError("TAU-E0201", `secret ${args.name} ${problem}`);
      this.log(await endpointIdOfKey(key));
    } catch (err) {
      if (err instanceof TauError) this.error(err.message, errorOptions(err));
      throw err;
    }
  }
}
