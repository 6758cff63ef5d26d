// Configuration: roots on disk, schema-validated configuration files, provider profiles and secrets.
export { resolveRoots, type Roots } from "./paths.js";
export { SECRET_ENV_PREFIX, withoutSecrets } from "./env.js";
export { ConfigError, MAX_CONFIG_BYTES, MAX_DROP_INS, loadCliConfig, loadHarnessConfig } from "./load.js";
export { MAX_SECRET_BYTES, SECRET_NAME, SecretError, preloadSecrets, readSecret, removeSecret, secretPath, secretValueProblem, secretsDir, writeSecret } from "./secrets.js";
export {
  MAX_PROFILES,
  checkProfileSecrets,
  profileDropInPath,
  profileExtension,
  profileNameProblem,
  profileSecretName,
  profilesOf,
  providerEndpoint,
  removeProfileDropIn,
  sessionDefault,
  writeProfileDropIn,
} from "./providers.js";
export { MAX_SUGGESTIONS, builtinModelInfo, checkModelChoice, closeMatches, editDistance, mergedModelInfo, type KnownModels, type ModelChoice } from "./models.js";
export {
  TRUSTED_PROJECTS_FILE,
  expandPath,
  loadSandboxConfig,
  projectTrusted,
  rememberClassifier,
  trustProject,
  type LoadedSandboxConfig,
  type SandboxConfigFile,
  type SandboxConfigSources,
  type SandboxLayer,
} from "./sandbox.js";
export { MCP_MAX_SERVERS, MCP_PROJECT_FILE, addMcpServer, loadMcpServers, mcpDropInFile, readClientMcpServers, mcpExtension, mcpSignInSecret, normalizedMcpUrl, remoteMcpServer, removeMcpSignIn, mcpInstanceName, mcpSamplingOf, mcpServerNameProblem, removeMcpServer, type McpServers } from "./mcp.js";
