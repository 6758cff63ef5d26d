// The sandbox's safe diagnostics when the session journal does not take them (SPEC-sandbox-reviewer,
// "Diagnostics"): permission handling goes on, and the doctor keeps the record in memory with a
// warning. The host stands in for the extension's connection, whose emit says whether an event was
// handed to the harness (`queued`) or not (`closed`: the harness is not reading).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Sandbox } from "../../../handwritten/extensions/shell/sandbox/index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function sandboxWith(sent: string): { sandbox: Sandbox; emitted: string[] } {
  const root = mkdtempSync(join(tmpdir(), "tau-sbx-diag-"));
  dirs.push(root);
  const emitted: string[] = [];
  const sandbox = new Sandbox({
    host: {
      emit: (name) => {
        emitted.push(name);
        return Promise.resolve(sent);
      },
    },
    projectRoot: root,
    roots: { config: join(root, "config"), state: join(root, "state"), runtime: join(root, "run") },
    // A platform the sandbox refuses: a `shell` call is blocked, which records a diagnostic.
    platform: "win32",
    env: {},
  });
  return { sandbox, emitted };
}

async function blockedCall(sandbox: Sandbox): Promise<string> {
  const err = await sandbox.runShellTool({ command: "echo hi" }, { callId: "call_1", agentId: "agent_1", cwd: tmpdir(), signal: new AbortController().signal }).catch((e: unknown) => e as Error);
  return (err as Error).message;
}

describe("diagnostics the session does not store", () => {
  it("[sandbox.review.diagnostic-unstored] a diagnostic the journal did not take is kept in memory and the doctor warns; the call is still answered", async () => {
    const { sandbox, emitted } = sandboxWith("closed");
    expect(await blockedCall(sandbox)).toContain("The sandbox is blocked");
    expect(emitted).toContain("sandbox.diagnostic_recorded");
    const doctor = (await sandbox.command(["doctor"])).text;
    expect(doctor).toMatch(/filesystem_write blocked call call_1 .*\(not stored\)/);
    expect(doctor).toContain("warning: 1 diagnostic(s) could not be stored in the session; they are kept in memory only");
  });

  it("a diagnostic the journal took carries no warning", async () => {
    const { sandbox } = sandboxWith("queued");
    await blockedCall(sandbox);
    const doctor = (await sandbox.command(["doctor"])).text;
    expect(doctor).toMatch(/filesystem_write blocked call call_1/);
    expect(doctor).not.toContain("not stored");
  });
});
