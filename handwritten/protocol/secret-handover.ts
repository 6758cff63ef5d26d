// Secrets never sit in the environment block of a tau process. `/proc/<pid>/environ` shows the
// environment a process was started with to every process of the same user — a model's shell command
// included — and nothing a process does later changes it. So OPENAI_API_KEY and every TAU_SECRET_*
// travel to a tau process on a pipe instead: the `tau` launcher lines (bin/tau.cjs) hand over what the
// user's environment holds, and a tau process that starts another (the daemon) hands over what it
// holds. bin/tau.cjs reads the pipe first thing and puts the values into process.env, which changes
// what that process sees, not its environment block. The names, the fd and the variable that points
// to it are launch facts (launch-facts.ts), which the launcher lines are written from.
import { SECRET_NAMES, SECRET_PREFIX, SECRETS_FD, SECRETS_FD_ENV } from "../startup/launch-facts.js";

/** Names the fd (always `SECRETS_FD`) a tau process reads its secrets from. */
export { SECRETS_FD_ENV };

/** The variables that are secrets: never in a tau process's environment block. */
export function isSecretVariable(name: string): boolean {
  return SECRET_NAMES.includes(name) || name.startsWith(SECRET_PREFIX);
}

export interface SecretHandover {
  /** The environment to start the process with: no secret variables, and `TAU_SECRETS_FD=3` when there are secrets. */
  readonly env: NodeJS.ProcessEnv;
  /** What to write to the child's fd 3 and then close (`NAME=value` lines), or undefined: nothing to hand over. */
  readonly secrets: string | undefined;
}

/** Splits `env` for a tau process started with fd 3 as a pipe (`stdio[3]: "pipe"`). */
export function secretHandover(env: NodeJS.ProcessEnv): SecretHandover {
  const out: NodeJS.ProcessEnv = {};
  let secrets = "";
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || name === SECRETS_FD_ENV) continue;
    if (isSecretVariable(name)) secrets += `${name}=${value}\n`;
    else out[name] = value;
  }
  if (secrets === "") return { env: out, secrets: undefined };
  return { env: { ...out, [SECRETS_FD_ENV]: String(SECRETS_FD) }, secrets };
}
