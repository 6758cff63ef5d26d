// The name under which the shell extension offers the sandbox runtime its bridges' socket id
// (build.ts patches the runtime's bundle to ask for it): a global symbol, so nothing of it is
// inherited by a command's environment.
export const BRIDGE_ID_HOOK = "tau.sandbox.bridgeSocketId";
/** Where the runtime asks tau for bubblewrap's version before it runs `bwrap --version` (bwrap-version.ts). */
export const BWRAP_VERSION_HOOK = "tau.sandbox.bwrapVersion";
/** Set by the runtime's bundle when node-forge is first required (build.ts): a test tells from it that loading did not. */
export const FORGE_LOADED_HOOK = "tau.sandbox.forgeLoaded";
