// The sandbox of the shell extension's `shell` tool (SPEC-sandbox).
export { Sandbox } from "./sandbox.js";
export type { SandboxHost, SandboxOptions, ShellCall } from "./types.js";
export { ServerSandbox, type ConfinedLaunch, type Confinement, type ServerSandboxOptions } from "./server-sandbox.js";
export { SANDBOX_APPROVAL_MAX_WAIT_MS, SANDBOX_PROMPTS_PER_CALL } from "./approvals.js";
export { SANDBOX_CALLS_NAMED_MAX } from "./connections.js";
export { SANDBOX_DIAGNOSTICS_KEPT } from "./diagnostics.js";
export { SANDBOX_REVIEW_MAX_WAIT_MS } from "./review.js";
export { findDenial, type Denial } from "./denials.js";
export type { FileCall } from "./file-access.js";
export { PROTECTED_FOLDERS, PROTECTED_NAMES, scanProject, unboundProtected, type Watched } from "./project-scan.js";
export { fileRules, readRefusal, writeVerdict, type Enforcement, type FileRules, type WriteVerdict } from "./file-policy.js";
export { DEFAULT_ALLOWED_DOMAINS, effectivePolicy, emptyGrants, hostCodePaths, protectedPaths, runtimeConfig, secretPaths, watchedPaths, within, type EffectivePolicy, type SessionGrants } from "./policy.js";
