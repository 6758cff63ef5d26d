// Secrets in the environment: `TAU_SECRET_<NAME>` variables are for the daemon alone. Every child
// process tau starts (extensions, shell commands) gets the environment without them.

export const SECRET_ENV_PREFIX = "TAU_SECRET_";

/** The environment minus every TAU_SECRET_* variable. */
export function withoutSecrets(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && !key.startsWith(SECRET_ENV_PREFIX)) out[key] = value;
  }
  return out;
}
