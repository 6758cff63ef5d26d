// What the `tau swarm` commands share: the status file, secrets read as the worker reads them, and
// the configuration error every one of them reports the same way.
import { join } from "node:path";
import { SecretError, readSecret, resolveRoots } from "../../../config/index.js";
import { TauError } from "../../errors.js";

/** Where `tau swarm serve` keeps its status and `tau swarm status` reads it. */
export function statusFile(): string {
  return join(resolveRoots().state, "swarm", "status.json");
}

/** The coordinator's secret holding worker NAME's credential. */
export const workerCredentialSecret = (name: string): string => `swarm-worker-${name}`;

/** A secret of the config root (then the state root); a TauError naming it when it is absent or unsafe. */
export function needSecret(name: string, writtenBy: string): string {
  const roots = resolveRoots();
  try {
    const value = readSecret(roots.config, name) ?? readSecret(roots.state, name);
    if (value === undefined) throw new TauError("TAU-E0201", `no secret ${name} (${join(roots.config, "secrets", name)}); ${writtenBy} writes it`);
    return value.trim();
  } catch (err) {
    if (err instanceof SecretError) throw new TauError("TAU-E0202", err.message);
    throw err;
  }
}
