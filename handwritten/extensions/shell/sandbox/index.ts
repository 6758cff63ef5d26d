// The sandbox of the shell extension's `shell` tool (SPEC-sandbox).
export { Sandbox, SANDBOX_APPROVAL_MAX_WAIT_MS, SANDBOX_DIAGNOSTICS_KEPT, type SandboxHost, type SandboxOptions, type ShellCall } from "./sandbox.js";
export { findDenial, type Denial } from "./denials.js";
export { DEFAULT_ALLOWED_DOMAINS, effectivePolicy, emptyGrants, protectedPaths, runtimeConfig, within, type EffectivePolicy, type SessionGrants } from "./policy.js";
