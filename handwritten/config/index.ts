// Configuration: roots on disk and schema-validated configuration files.
export { resolveRoots, type Roots } from "./paths.js";
export { ConfigError, MAX_CONFIG_BYTES, loadCliConfig, loadHarnessConfig } from "./load.js";
