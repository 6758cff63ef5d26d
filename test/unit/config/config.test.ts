import { describe, expect, it } from "vitest";
import { useTempDirs } from "../../support/temp-dirs.js";
import { rejectionMessage } from "../../support/rejection.js";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, MAX_CONFIG_BYTES, MAX_DROP_INS, loadHarnessConfig } from "../../../handwritten/config/index.js";
import { initConfig } from "../../../handwritten/cli/init.js";
import { runTau } from "../../support/run-tau.js";

const root = useTempDirs("tau-config-");

const error = (p: Promise<unknown>): Promise<string> => rejectionMessage(p, ConfigError);

describe("configuration", () => {
  it("[config.errors.name-file-line-key] names the file, the line and the key of an invalid value or unknown key", async () => {
    const r = root();
    writeFileSync(join(r, "harness.yaml"), "model: ok\ndebug_log:\n  enable: true\n  retention_days: -3\n");
    expect(await error(loadHarnessConfig(r))).toBe(`${join(r, "harness.yaml")}:4: debug_log.retention_days: must be >= 0`);
    writeFileSync(join(r, "harness.yaml"), "model: ok\nextensions:\n  - name: a\n    command: [x]\n    colour: blue\n");
    expect(await error(loadHarnessConfig(r))).toBe(`${join(r, "harness.yaml")}:5: extensions.0.colour: unknown key`);
    writeFileSync(join(r, "harness.yaml"), "model: [unclosed\n");
    expect(await error(loadHarnessConfig(r))).toMatch(new RegExp(`^${join(r, "harness.yaml")}:\\d+: invalid YAML`));
  });

  it("[roles.config.entry-form] a role's tool entry is a tool name, group:, tag: or ext:; any other form is refused, naming the line and key, so a mistyped deny never silently matches nothing", async () => {
    const r = root();
    writeFileSync(join(r, "harness.yaml"), "roles:\n  reviewer:\n    deny_tools: [shell, \"group:write\", \"tag:network\", \"ext:my-plugin\"]\n");
    expect((await loadHarnessConfig(r)).roles?.reviewer?.deny_tools).toEqual(["shell", "group:write", "tag:network", "ext:my-plugin"]);
    for (const entry of ["groups:write", "Shell", "group:", "*"]) {
      writeFileSync(join(r, "harness.yaml"), `roles:\n  reviewer:\n    deny_tools:\n      - shell\n      - ${JSON.stringify(entry)}\n`);
      expect(await error(loadHarnessConfig(r))).toMatch(new RegExp(`^${join(r, "harness.yaml")}:5: roles\\.reviewer\\.deny_tools\\.1: `));
    }
  });

  it("[config.layers.drop-ins-and-overrides] merges harness.yaml, harness.d/*.yaml in name order and KEY=VALUE overrides", async () => {
    const r = root();
    writeFileSync(join(r, "harness.yaml"), "model: base\nextensions:\n  - { name: a, command: [one] }\n  - { name: b, command: [two] }\n");
    mkdirSync(join(r, "harness.d"));
    writeFileSync(join(r, "harness.d", "20-later.yaml"), "model: later\n");
    writeFileSync(join(r, "harness.d", "10-first.yaml"), "model: first\nextensions:\n  - { name: b, command: [replaced] }\n  - { name: c, command: [three] }\ndebug_log: { retention_days: 3 }\n");
    writeFileSync(join(r, "harness.d", "notes.txt"), "ignored: true\n");
    const merged = await loadHarnessConfig(r, ["debug_log.enable=false"]);
    expect(merged.model).toBe("later");
    expect(merged.extensions?.map((e) => [e.name, e.command[0]])).toEqual([
      ["a", "one"],
      ["b", "replaced"],
      ["c", "three"],
    ]);
    expect(merged.debug_log).toEqual({ retention_days: 3, enable: false });
    expect(await error(loadHarnessConfig(r, ["debug_log.retention_days=lots"]))).toBe("--harness-config debug_log.retention_days: must be integer");
    expect(await error(loadHarnessConfig(r, ["Model=x"]))).toContain("expected KEY=VALUE");
    expect(await error(loadHarnessConfig(r, ["colour=blue"]))).toBe("--harness-config colour: unknown key");
  });

  it("bounds file size and the number of drop-ins (at, and one above)", async () => {
    const r = root();
    writeFileSync(join(r, "harness.yaml"), `# ${"x".repeat(MAX_CONFIG_BYTES - 3)}\n`);
    expect(statSync(join(r, "harness.yaml")).size).toBe(MAX_CONFIG_BYTES);
    await expect(loadHarnessConfig(r)).resolves.toEqual({});
    writeFileSync(join(r, "harness.yaml"), `# ${"x".repeat(MAX_CONFIG_BYTES - 2)}\n`);
    expect(await error(loadHarnessConfig(r))).toContain(`larger than ${MAX_CONFIG_BYTES} bytes`);
    rmSync(join(r, "harness.yaml"));
    mkdirSync(join(r, "harness.d"));
    for (let i = 0; i < MAX_DROP_INS; i++) writeFileSync(join(r, "harness.d", `${String(i).padStart(3, "0")}.yaml`), "{}\n");
    await expect(loadHarnessConfig(r)).resolves.toEqual({});
    writeFileSync(join(r, "harness.d", "999.yaml"), "{}\n");
    expect(await error(loadHarnessConfig(r))).toContain(`more than ${MAX_DROP_INS} drop-in files`);
  });

  it("[config.init.samples-valid] tau init writes commented samples that load, and never overwrites", async () => {
    const r = root();
    const first = initConfig(join(r, "config"));
    expect(first.written.map((p) => p.split("/").pop())).toEqual(["harness.yaml", "cli.yaml"]);
    expect(await loadHarnessConfig(join(r, "config"))).toEqual({ debug_log: { enable: true, retention_days: 14 } });
    expect(statSync(join(r, "config", "harness.yaml")).mode & 0o777).toBe(0o600);
    writeFileSync(join(r, "config", "cli.yaml"), "theme: mine\n");
    const cli = await runTau(["init"], { env: { TAU_HOME: r } });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain("kept");
    expect(readFileSync(join(r, "config", "cli.yaml"), "utf8")).toBe("theme: mine\n");
  });

  it("tau run reports a configuration error to the terminal with exit 2", async () => {
    const r = root();
    mkdirSync(join(r, "config"));
    writeFileSync(join(r, "config", "harness.yaml"), "model: 42\n");
    const res = await runTau(["run", "-p", "hi"], { env: { TAU_HOME: r } });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(`tau: ${join(r, "config", "harness.yaml")}:1: model: must be string [TAU-E0201]\n`);
  });
});
