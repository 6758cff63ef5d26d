// Secrets in the environment: `TAU_SECRET_<NAME>` variables (and OPENAI_API_KEY, which the daemon
// turns into one) are for the daemon alone. Every child process tau starts (extensions, shell
// commands) gets the environment without them; tau's own processes get them on a pipe
// (protocol/secret-handover.ts).
import { isSecretVariable } from "../protocol/secret-handover.js";

export const SECRET_ENV_PREFIX = "TAU_SECRET_";

/** The environment minus every secret variable (OPENAI_API_KEY and each TAU_SECRET_*). */
export function withoutSecrets(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && !isSecretVariable(key)) out[key] = value;
  }
  return out;
}
