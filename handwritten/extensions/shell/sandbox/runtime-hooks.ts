// Where tau and the sandbox runtime's bundle meet (build.ts patches the bundle to use them): names
// of global symbols, so nothing of them is inherited by a command's environment.

/** Where the shell extension offers the runtime its bridges' socket id (runtime-leftovers.ts). */
export const BRIDGE_ID_HOOK = "tau.sandbox.bridgeSocketId";
/** Where the runtime asks tau for bubblewrap's version before it runs `bwrap --version` (bwrap-version.ts). */
export const BWRAP_VERSION_HOOK = "tau.sandbox.bwrapVersion";
/** Set by the runtime's bundle when node-forge is first required (build.ts): a test tells from it that loading did not. */
export const FORGE_LOADED_HOOK = "tau.sandbox.forgeLoaded";
/**
 * Where the runtime takes its proxy's credential from tau (lifecycle.ts) instead of minting one, so
 * a wrap kept from an earlier start (kept-wrap.ts) carries the credential of this start's proxy.
 */
export const PROXY_TOKEN_HOOK = "tau.sandbox.proxyToken";
