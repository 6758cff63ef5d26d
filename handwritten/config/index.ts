// Configuration: roots on disk and schema-validated configuration files.
export { resolveRoots, type Roots } from "./paths.js";
export { SECRET_ENV_PREFIX, withoutSecrets } from "./env.js";
export { ConfigError, MAX_CONFIG_BYTES, MAX_DROP_INS, loadCliConfig, loadHarnessConfig } from "./load.js";
