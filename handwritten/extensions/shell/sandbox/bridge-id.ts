// The name under which the shell extension offers the sandbox runtime its bridges' socket id
// (build.ts patches the runtime's bundle to ask for it): a global symbol, so nothing of it is
// inherited by a command's environment.
export const BRIDGE_ID_HOOK = "tau.sandbox.bridgeSocketId";
