// Extension supervision: spawn, configure, activation barrier, respawn, secrets (SPEC-extension-host).
export { Supervisor, StartupError, type ExtensionCounters, type SupervisorHost, type SupervisorOptions } from "./supervisor.js";
export { diagnosticField, extensionArgv, spawnDiagnostic, startEarly, type EarlyExtension } from "./spawn.js";
export * from "./limits.js";
export { addPeerInterceptor, connectionSink, replyFromPeer } from "./peer-bus.js";
