// The configuration check `tau run` makes only when its daemon exited before it started. The usual
// cause is a configuration mistake, which the daemon reports to its log; making the same check here
// brings the message (file, line and key) to this terminal. A bundle of its own
// (dist/fast/run-config.cjs), so a run that goes well never loads the YAML parser and the
// configuration schemas into its client.
import { ConfigError, checkProfileSecrets, loadHarnessConfig, loadMcpServers, type Roots } from "../../config/index.js";

/** The configuration mistake's message, or undefined when the configuration is sound. */
export async function configMistake(roots: Roots, overrides: readonly string[], projectRoot: string = process.cwd()): Promise<string | undefined> {
  try {
    const config = await loadHarnessConfig(roots.config, overrides);
    checkProfileSecrets(config, roots.config, process.env);
    await loadMcpServers(config, roots.config, projectRoot);
    return undefined;
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
}
