// Configuration: roots on disk and schema-validated configuration files.
export { resolveRoots, type Roots } from "./paths.js";
export { ConfigError, MAX_CONFIG_BYTES, MAX_DROP_INS, loadCliConfig, loadHarnessConfig } from "./load.js";
