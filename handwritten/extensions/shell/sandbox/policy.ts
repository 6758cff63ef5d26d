// The sandbox's effective policy (SPEC-sandbox): the defaults, the loaded sandbox.yaml layers and
// the session's grants, turned into the runtime's configuration for one command.
import { lstatSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve, sep } from "node:path";
import type { FilesystemPathEntry, SandboxRuntimeConfig } from "@anthropic-ai/sandbox-runtime";
import type { SandboxConfig } from "../../../../generated/index.js";
import type { Roots, SandboxLayer } from "../../../config/index.js";
import { scanProject, scannedDenyWrite, type ProjectScan } from "./project-scan.js";

/** A developer's network allowlist: package registries, git forges, model providers. */
export const DEFAULT_ALLOWED_DOMAINS: readonly string[] = [
  // package registries
  "registry.npmjs.org",
  "*.npmjs.org",
  "registry.yarnpkg.com",
  "pypi.org",
  "files.pythonhosted.org",
  "crates.io",
  "*.crates.io",
  "proxy.golang.org",
  "sum.golang.org",
  "rubygems.org",
  "repo.maven.apache.org",
  "repo1.maven.org",
  "deb.debian.org",
  "security.debian.org",
  "archive.ubuntu.com",
  "security.ubuntu.com",
  // git forges
  "github.com",
  "*.github.com",
  "*.githubusercontent.com",
  "gitlab.com",
  "*.gitlab.com",
  "bitbucket.org",
  // model providers
  "api.openai.com",
  "api.anthropic.com",
  "generativelanguage.googleapis.com",
  "openrouter.ai",
  "api.mistral.ai",
  "api.groq.com",
  "api.deepseek.com",
  // Not this machine's loopback (`localhost`, `127.0.0.1`, `[::1]` …): its services (tau's own
  // among them) are asked about like any other host, until the user grants one.
];

const home = (): string => homedir();

export function defaultDenyRead(): string[] {
  return [join(home(), ".ssh"), join(home(), ".aws"), join(home(), ".gnupg")];
}

export function defaultAllowRead(): string[] {
  return [join(home(), ".ssh", "known_hosts"), join(home(), ".ssh", "config"), join(home(), ".ssh", "*.pub")];
}

export function defaultAllowWrite(projectRoot: string): string[] {
  return [projectRoot, join(home(), ".npm"), join(home(), ".cache"), join(home(), ".cargo", "registry"), join(home(), "go", "pkg", "mod")];
}

/** File names the default deny-write covers (as shown by `:sandbox show`). */
export const DEFAULT_DENY_WRITE_PATTERNS: readonly string[] = [".env*", "*.pem", "*.key"];

/** The shell start-up files of bash and zsh in the home folder (fish's are in its configuration folder). */
export const SHELL_STARTUP_FILES: readonly string[] = [".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout"];

/**
 * What runs code on the host when the user logs in, starts a shell, runs git or connects over ssh,
 * in the home folder: the shell start-up files (`$ZDOTDIR`'s too), git's global configuration,
 * fish's configuration, ssh's per-user files, and what desktops and service managers start.
 */
export function hostCodePaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const h = home();
  const xdg = env.XDG_CONFIG_HOME ? [env.XDG_CONFIG_HOME] : [];
  const configDirs = [...new Set([join(h, ".config"), ...xdg])];
  const zdot = env.ZDOTDIR && env.ZDOTDIR !== h ? [".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout"].map((f) => join(env.ZDOTDIR as string, f)) : [];
  return [
    ...SHELL_STARTUP_FILES.map((f) => join(h, f)),
    ...zdot,
    join(h, ".gitconfig"),
    ...configDirs.flatMap((c) => [join(c, "git"), join(c, "fish"), join(c, "autostart"), join(c, "systemd"), join(c, "environment.d")]),
    ...["authorized_keys", "authorized_keys2", "config", "rc", "environment"].map((f) => join(h, ".ssh", f)),
    join(h, "Library", "LaunchAgents"),
  ];
}

/**
 * Paths no command may write, whatever the configuration says, existing or not: the project's
 * `.tau/` and git hooks and config, its shell start-up files, what runs code on the host from the
 * home folder (hostCodePaths), and tau's own roots.
 */
export function protectedPaths(projectRoot: string, roots: Roots, env: NodeJS.ProcessEnv = process.env): string[] {
  const rc = [".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile"];
  return [
    join(projectRoot, ".tau"),
    join(projectRoot, ".git", "hooks"),
    join(projectRoot, ".git", "config"),
    ...rc.map((f) => join(projectRoot, f)),
    ...hostCodePaths(env),
    roots.config,
    roots.state,
    roots.runtime,
  ];
}

/** tau's stored provider keys and sign-in tokens (`secrets/` of the config root, and of the state root, read too): never readable by default. */
export function secretPaths(roots: Roots): string[] {
  return [join(roots.config, "secrets"), join(roots.state, "secrets")];
}

/** The session's own changes (`:sandbox …` commands and "allow but let the model adapt"); never persisted. */
export interface SessionGrants {
  readonly allowDomains: Set<string>;
  readonly denyDomains: Set<string>;
  readonly allowWrite: Set<string>;
  readonly denyRead: Set<string>;
  /** Paths re-allowed for reading inside a denied region (a read approval's "allow but let the model adapt"). */
  readonly allowRead: Set<string>;
}

export function emptyGrants(): SessionGrants {
  return { allowDomains: new Set(), denyDomains: new Set(), allowWrite: new Set(), denyRead: new Set(), allowRead: new Set() };
}

/** The policy in tau's terms, every path absolute. */
export interface EffectivePolicy {
  readonly allowedDomains: string[];
  readonly deniedDomains: string[];
  readonly denyRead: string[];
  readonly allowRead: string[];
  readonly allowWrite: string[];
  /** Configured deny-write entries (the default's patterns are expanded per command). */
  readonly denyWrite: string[];
  readonly defaultDenyWrite: boolean;
  readonly protected: string[];
}

export function effectivePolicy(config: SandboxConfig, projectRoot: string, roots: Roots, grants: SessionGrants): EffectivePolicy {
  const fs = config.filesystem ?? {};
  const net = config.network ?? {};
  return {
    allowedDomains: [...(net.allowed_domains ?? DEFAULT_ALLOWED_DOMAINS), ...grants.allowDomains],
    deniedDomains: [...(net.denied_domains ?? []), ...grants.denyDomains],
    // tau's own secrets are denied whatever list is configured; only an allow-read can open them.
    denyRead: [...(fs.deny_read ?? defaultDenyRead()), ...secretPaths(roots), ...grants.denyRead],
    allowRead: [...(fs.allow_read ?? defaultAllowRead()), ...grants.allowRead],
    allowWrite: [...(fs.allow_write ?? defaultAllowWrite(projectRoot)), ...grants.allowWrite],
    denyWrite: [...(fs.deny_write ?? [])],
    defaultDenyWrite: fs.deny_write === undefined,
    protected: protectedPaths(projectRoot, roots),
  };
}

/** A literal path entry of the runtime: never read as a pattern, so a missing path is denied too. */
type LiteralEntry = Exclude<FilesystemPathEntry, string>;
type PathEntry = FilesystemPathEntry;

/** The runtime's configuration as tau writes it: every path list present. */
export type RuntimePolicyConfig = SandboxRuntimeConfig & {
  filesystem: { denyRead: PathEntry[]; allowRead: PathEntry[]; allowWrite: PathEntry[]; denyWrite: PathEntry[] };
};

/**
 * The runtime's configuration for one command; `extra` is a replay's one-off grant. `scan` is the
 * project as found just before the command (its credential files, protected names and git folders
 * are bound read-only); without one the project is scanned here. A protected path inside the
 * project that does not exist is left out: bubblewrap would make a mount point for it in the
 * project (an empty read-only file or folder) — it is watched instead (`unboundProtected`).
 */
export function runtimeConfig(
  policy: EffectivePolicy,
  projectRoot: string,
  extra: { write?: string; read?: string } = {},
  scan: ProjectScan = scanProject(projectRoot),
): RuntimePolicyConfig {
  const literal = (path: string): LiteralEntry => ({ path, literal: true });
  const inProject = (p: string): boolean => p !== projectRoot && within(p, projectRoot);
  const protectedBound = policy.protected.filter((p) => !inProject(p) || exists(p));
  const literals = [...new Set([...scannedDenyWrite(scan, policy.defaultDenyWrite), ...protectedBound])];
  // A configured entry inside the project that does not exist is watched like a protected path.
  const configured = policy.denyWrite.filter((p) => hasPattern(p) || !inProject(p) || exists(p));
  const denyWrite: PathEntry[] = [...configured, ...literals.map(literal)];
  const denyRead = extra.read === undefined ? policy.denyRead : policy.denyRead.filter((p) => !within(extra.read as string, p));
  return {
    network: { allowedDomains: [...policy.allowedDomains], deniedDomains: [...policy.deniedDomains] },
    filesystem: {
      denyRead,
      allowRead: [...policy.allowRead, ...(extra.read !== undefined ? [extra.read] : [])],
      allowWrite: [...policy.allowWrite, ...(extra.write !== undefined ? [extra.write] : [])],
      denyWrite,
    },
  };
}

/** Whether a configured path is a pattern (the runtime expands it to what exists). */
export function hasPattern(path: string): boolean {
  return /[*?[\]{}]/.test(path);
}

/** The paths watched when they do not exist: the protected paths and the configured deny-write paths. */
export function watchedPaths(policy: EffectivePolicy): string[] {
  return [...policy.protected, ...policy.denyWrite.filter((p) => !hasPattern(p))];
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether `path` is `root` or inside it (both absolute, compared as text). */
export function within(path: string, root: string): boolean {
  const r = resolve(root);
  const p = resolve(path);
  return p === r || p.startsWith(r.endsWith(sep) ? r : r + sep);
}

/** Where each shown value came from, for `:sandbox show`. */
export function originOf(origins: Readonly<Record<string, SandboxLayer>>, key: string): SandboxLayer {
  return origins[key] ?? "default";
}

