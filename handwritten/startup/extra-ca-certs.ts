// NODE_EXTRA_CA_CERTS, deferred. When it is set, node reads and parses every root certificate at
// start-up (60 ms on a small machine), though in tau only the provider's egress makes TLS
// connections. So tau's own node processes (the `tau` command through bin/tau.cjs's shell line, the
// daemon, first-party extensions) are started with the variable renamed; bin/tau.cjs puts it back
// into process.env, so every other process started from there (a shell command, a third-party
// extension) sees the user's variable unchanged, and records the file for the egress, which adds
// it to its trust store on its first https connection. The names are launch facts (launch-facts.ts).
import { DEFERRED_CA_CERTS_ENV, DEFERRED_CA_CERTS_SYMBOL, EXTRA_CA_CERTS_ENV, OPENSSL_CA_OPTION } from "./launch-facts.js";

/** The name NODE_EXTRA_CA_CERTS travels under to a tau process (bin/tau.cjs reads it). */
export { DEFERRED_CA_CERTS_ENV };

/**
 * The environment for a node process running tau's own code: NODE_EXTRA_CA_CERTS renamed, unless
 * NODE_OPTIONS picks OpenSSL's store (whose extra certificates only node itself can add).
 */
export function forTauProcess(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const file = env[EXTRA_CA_CERTS_ENV];
  if (file === undefined || ` ${env.NODE_OPTIONS ?? ""}`.includes(` ${OPENSSL_CA_OPTION}`)) return env;
  const out: NodeJS.ProcessEnv = { ...env, [DEFERRED_CA_CERTS_ENV]: file };
  delete out[EXTRA_CA_CERTS_ENV];
  return out;
}

/**
 * The certificate file of a NODE_EXTRA_CA_CERTS that this process's node did not load because it was
 * deferred (bin/tau.cjs records it), or undefined when node loaded it itself or there is none.
 */
export function deferredCaCertsFile(): string | undefined {
  const file: unknown = Reflect.get(process, Symbol.for(DEFERRED_CA_CERTS_SYMBOL));
  return typeof file === "string" && file !== "" ? file : undefined;
}
