// The file tools need the sandbox's policy, never its runtime (SPEC-sandbox, "Scope" and "States"):
// the real sandbox of the shell extension, real files, the real runtime setting itself up.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Sandbox } from "../../../handwritten/extensions/shell/sandbox/index.js";
import type { SandboxStateReported } from "../../../generated/index.js";

const made: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const undo of made.splice(0).reverse()) await undo();
});

describe("the sandbox's policy and its runtime", () => {
  it("the policy is ready (for the file tools) while the runtime is still setting itself up", async () => {
    const home = mkdtempSync(join(tmpdir(), "tau-sbx-setup-"));
    made.push(() => rmSync(home, { recursive: true, force: true }));
    const project = join(home, "project");
    mkdirSync(join(home, "config"), { recursive: true });
    mkdirSync(project);
    writeFileSync(join(home, "config", "sandbox.yaml"), "filesystem:\n  deny_read: [~/private]\n");
    const states: string[] = [];
    const sandbox = new Sandbox({
      host: { emit: (name, data) => name === "sandbox.state_reported" && states.push(`${(data as SandboxStateReported).state} ${(data as SandboxStateReported).mode ?? "-"}`) },
      projectRoot: project,
      roots: { config: join(home, "config"), state: join(home, "state"), runtime: join(home, "run") },
    });
    const cwd = process.cwd();
    made.push(() => process.chdir(cwd));
    const started = sandbox.start();
    made.push(async () => {
      await started;
      await sandbox.stop();
    });
    await sandbox.policyReady();
    // The configured policy applies already; the runtime's proxy and bridges are not up yet.
    expect(sandbox.policy().denyRead.some((p) => p.endsWith("/private"))).toBe(true);
    expect(sandbox.state).toBe("pending");
    await started;
    // Pending is said again once the policy is read, now with the mode in force (tau acp's modes need no runtime).
    expect(states).toEqual(["pending -", "pending interactive", "active interactive"]);
  });
});
