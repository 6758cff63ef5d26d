// Configuration: roots on disk, schema-validated configuration files, provider profiles and secrets.
export { resolveRoots, type Roots } from "./paths.js";
export { SECRET_ENV_PREFIX, withoutSecrets } from "./env.js";
export { ConfigError, MAX_CONFIG_BYTES, MAX_DROP_INS, loadCliConfig, loadHarnessConfig } from "./load.js";
export { MAX_SECRET_BYTES, SecretError, preloadSecrets, readSecret, removeSecret, secretPath, secretValueProblem, secretsDir, writeSecret } from "./secrets.js";
export {
  MAX_PROFILES,
  checkProfileSecrets,
  profileDefaultModel,
  profileDropInPath,
  profileExtension,
  profileNameProblem,
  profileSecretName,
  profilesOf,
  removeProfileDropIn,
  writeProfileDropIn,
} from "./providers.js";
export {
  TRUSTED_PROJECTS_FILE,
  expandPath,
  loadSandboxConfig,
  projectTrusted,
  trustProject,
  type LoadedSandboxConfig,
  type SandboxConfigFile,
  type SandboxConfigSources,
  type SandboxLayer,
} from "./sandbox.js";
