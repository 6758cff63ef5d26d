// sandbox.yaml's layers, trust, expansion and errors (SPEC-sandbox, "Configuration").
import { describe, expect, it } from "vitest";
import { useTempDirs } from "../../support/temp-dirs.js";
import { rejectionMessage } from "../../support/rejection.js";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadSandboxConfig, projectTrusted, trustProject } from "../../../handwritten/config/index.js";
import { DEFAULT_ALLOWED_DOMAINS, effectivePolicy, emptyGrants, runtimeConfig, scanProject, unboundProtected, watchedPaths } from "../../../handwritten/extensions/shell/sandbox/index.js";

const tempDir = useTempDirs("tau-sbx-config-");

function layout(): { config: string; project: string; roots: { config: string; state: string; runtime: string } } {
  const d = tempDir();
  const config = join(d, "config");
  const project = join(d, "project");
  mkdirSync(config);
  mkdirSync(join(project, ".tau"), { recursive: true });
  return { config, project, roots: { config, state: join(d, "state"), runtime: join(d, "runtime") } };
}

const error = (p: Promise<unknown>): Promise<string> => rejectionMessage(p, ConfigError);

describe("sandbox.yaml", () => {
  it("[sandbox.config.layers] global, then a trusted project's file; lists replace; --sandbox-config replaces both", async () => {
    const l = layout();
    writeFileSync(join(l.config, "sandbox.yaml"), "mode: non-interactive\nnetwork:\n  allowed_domains: [a.example, b.example]\n  denied_domains: [bad.example]\n");
    writeFileSync(join(l.project, ".tau", "sandbox.yaml"), "network:\n  allowed_domains: [c.example]\n");
    const untrusted = await loadSandboxConfig({ configRoot: l.config, projectRoot: l.project, env: {} });
    expect(untrusted.config).toEqual({ mode: "non-interactive", network: { allowed_domains: ["a.example", "b.example"], denied_domains: ["bad.example"] } });
    expect(untrusted.files.map((f) => [f.layer, f.status])).toEqual([
      ["global", "loaded"],
      ["project", "skipped-untrusted"],
    ]);
    expect(untrusted.warnings[0]).toContain("ignored: this project is not trusted");

    expect(projectTrusted(l.config, l.project)).toBe(false);
    trustProject(l.config, l.project);
    trustProject(l.config, l.project);
    expect(readFileSync(join(l.config, "trusted-projects"), "utf8").split("\n").filter(Boolean)).toHaveLength(1);
    const trusted = await loadSandboxConfig({ configRoot: l.config, projectRoot: l.project, env: {} });
    // The project's list replaces the global one whole; the global's other keys stay.
    expect(trusted.config.network).toEqual({ allowed_domains: ["c.example"], denied_domains: ["bad.example"] });
    expect(trusted.origins).toMatchObject({ mode: "global", "network.allowed_domains": "project", "network.denied_domains": "global" });

    const file = join(l.project, "only.yaml");
    writeFileSync(file, "enabled: false\n");
    const override = await loadSandboxConfig({ configRoot: l.config, projectRoot: l.project, overrideFile: file, env: {} });
    expect(override.config).toEqual({ enabled: false });
    expect(override.files.map((f) => f.layer)).toEqual(["override"]);
    expect(await error(loadSandboxConfig({ configRoot: l.config, projectRoot: l.project, overrideFile: join(l.project, "none.yaml"), env: {} }))).toContain(
      "--sandbox-config names a file that does not exist",
    );
  });

  it("[sandbox.config.expansion-and-errors] ~ and $VAR expand; relative paths resolve from the project; bad values name file:line", async () => {
    const l = layout();
    const file = join(l.config, "sandbox.yaml");
    writeFileSync(file, 'filesystem:\n  allow_write: ["~/cache", "$WORK/out", "${WORK}/x", "rel/dir"]\n');
    const ok = await loadSandboxConfig({ configRoot: l.config, projectRoot: l.project, env: { WORK: "/w" } });
    expect(ok.config.filesystem?.allow_write).toEqual([join(homedir(), "cache"), "/w/out", "/w/x", join(l.project, "rel", "dir")]);

    expect(await error(loadSandboxConfig({ configRoot: l.config, projectRoot: l.project, env: {} }))).toBe(`${file}:2: filesystem.allow_write.1: $WORK is not set`);
    writeFileSync(file, 'network:\n  allowed_domains:\n    - ok.example\n    - "bad\\u0007.example"\n');
    expect(await error(loadSandboxConfig({ configRoot: l.config, projectRoot: l.project, env: {} }))).toBe(`${file}:4: network.allowed_domains.1: contains a control character`);
    // A host entry the proxy could never match, or one too broad to mean what it says, is refused.
    writeFileSync(file, 'network:\n  allowed_domains: [ok.example, "*.dev.example:8080", "[::1]:443", "10.0.0.1", localhost, "*.com"]\n');
    expect(await error(loadSandboxConfig({ configRoot: l.config, projectRoot: l.project, env: {} }))).toMatch(new RegExp(`^${file}:2: network\\.allowed_domains\\.5: "\\*\\.com" is not a host entry: give a host \\(example\\.com\\), a wildcard under a domain`));
    writeFileSync(file, 'network:\n  allowed_domains: [ok.example, "*.dev.example:8080", "[::1]:443", "10.0.0.1", localhost]\n  denied_domains: ["*", "bad host.example"]\n');
    expect(await error(loadSandboxConfig({ configRoot: l.config, projectRoot: l.project, env: {} }))).toMatch(new RegExp(`^${file}:3: network\\.denied_domains\\.1: "bad host\\.example" is not a host entry`));
    writeFileSync(file, "enabled: yes please\n");
    expect(await error(loadSandboxConfig({ configRoot: l.config, projectRoot: l.project, env: {} }))).toMatch(new RegExp(`^${file}:1: enabled: `));
    writeFileSync(file, "filesystem:\n  allow_writes: [/x]\n");
    expect(await error(loadSandboxConfig({ configRoot: l.config, projectRoot: l.project, env: {} }))).toBe(`${file}:2: filesystem.allow_writes: unknown key`);
  });

  it("[sandbox.policy.defaults] the defaults: developer allowlist, credential reads denied, protected paths literal (so a missing one outside the project is covered; one inside it is watched, never a mount point)", () => {
    const l = layout();
    const policy = effectivePolicy({}, l.project, l.roots, emptyGrants());
    expect(policy.allowedDomains).toEqual(expect.arrayContaining(["registry.npmjs.org", "pypi.org", "github.com", "api.openai.com"]));
    // The host's loopback is not on it: its services are asked about like any other host.
    for (const loopback of ["localhost", "127.0.0.1", "[::1]", "::1"]) expect(policy.allowedDomains).not.toContain(loopback);
    // tau's own stored keys and sign-in tokens are denied too, whatever deny_read says.
    expect(policy.denyRead).toEqual([join(homedir(), ".ssh"), join(homedir(), ".aws"), join(homedir(), ".gnupg"), join(l.roots.config, "secrets"), join(l.roots.state, "secrets")]);
    expect(effectivePolicy({ filesystem: { deny_read: ["/elsewhere"] } }, l.project, l.roots, emptyGrants()).denyRead).toEqual(["/elsewhere", join(l.roots.config, "secrets"), join(l.roots.state, "secrets")]);
    expect(policy.allowRead).toEqual(expect.arrayContaining([join(homedir(), ".ssh", "known_hosts"), join(homedir(), ".ssh", "*.pub")]));
    expect(policy.allowWrite[0]).toBe(l.project);
    writeFileSync(join(l.project, ".env.local"), "K=V\n");
    mkdirSync(join(l.project, "certs"));
    writeFileSync(join(l.project, "certs", "server.key"), "k\n");
    const runtime = runtimeConfig(policy, l.project);
    expect(runtime.filesystem.denyWrite).toEqual(
      expect.arrayContaining([
        { path: join(l.project, ".env.local"), literal: true },
        { path: join(l.project, "certs", "server.key"), literal: true },
        // The project's .tau exists here (see layout): bound read-only.
        { path: join(l.project, ".tau"), literal: true },
        { path: l.roots.config, literal: true },
        // What runs code on the host from the home folder.
        { path: join(homedir(), ".gitconfig"), literal: true },
        { path: join(homedir(), ".zshenv"), literal: true },
        { path: join(homedir(), ".bash_login"), literal: true },
        { path: join(homedir(), ".config", "git"), literal: true },
        { path: join(homedir(), ".config", "fish"), literal: true },
        { path: join(homedir(), ".ssh", "authorized_keys"), literal: true },
      ]),
    );
    // The project's missing protected paths are not handed to the runtime (bubblewrap would make an
    // empty read-only file or folder for each in the project): what a command makes of them is checked after it.
    const denied = runtime.filesystem.denyWrite.map((e) => (typeof e === "string" ? e : e.path));
    expect(denied).not.toContain(join(l.project, ".git", "hooks"));
    expect(denied).not.toContain(join(l.project, ".bashrc"));
    expect(unboundProtected(scanProject(l.project), l.project, watchedPaths(policy))).toEqual(
      expect.arrayContaining([
        { path: join(l.project, ".git", "hooks"), rule: "hooks" },
        { path: join(l.project, ".bashrc"), rule: "whole" },
      ]),
    );
    // A configured list replaces the default one whole.
    const narrowed = effectivePolicy({ network: { allowed_domains: ["only.example"] } }, l.project, l.roots, emptyGrants());
    expect(narrowed.allowedDomains).toEqual(["only.example"]);
    expect(DEFAULT_ALLOWED_DOMAINS).not.toContain("127.0.0.1");
  });
});
