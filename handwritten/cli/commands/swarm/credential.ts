// `tau swarm credential NAME`: a fresh worker credential in secret swarm-worker-NAME.
import { Args, Command, Flags } from "@oclif/core";
import { readSecret, resolveRoots, secretPath, writeSecret } from "../../../config/index.js";
import { randomHex } from "../../../startup/random.js";
import { TauError, errorOptions } from "../../errors.js";
import { workerCredentialSecret } from "./shared.js";

export default class SwarmCredential extends Command {
  static override summary = "Write a fresh credential for swarm worker NAME to secret swarm-worker-NAME (never printed).";
  static override description =
    "The coordinator admits worker NAME only with this credential. Copy the secret file to the worker's machine (its <config>/secrets/, mode 0600) " +
    "and name it in the worker's swarm entry (`credential_secret`, and under `secrets:`).";
  static override args = { name: Args.string({ description: "The worker's name.", required: true }) };
  static override flags = { force: Flags.boolean({ description: "Replace a credential written before." }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SwarmCredential);
    try {
      if (!/^[a-z][a-z0-9_-]{0,31}$/.test(args.name)) throw new TauError("TAU-E0201", `${JSON.stringify(args.name.slice(0, 80))} is not a worker name (lowercase letters, digits, - and _; at most 32)`);
      const config = resolveRoots().config;
      const name = workerCredentialSecret(args.name);
      if (readSecret(config, name) !== undefined && !flags.force) throw new TauError("TAU-E0201", `secret ${name} exists; --force replaces it`);
      writeSecret(config, name, randomHex(32));
      this.log(secretPath(config, name));
    } catch (err) {
      if (err instanceof TauError) this.error(err.message, errorOptions(err));
      throw err;
    }
  }
}
