// The `:sandbox` commands that change the policy, through a real daemon, real bubblewrap and a
// loopback HTTP server (SPEC-sandbox, "Commands" and "Approvals"): each takes effect on the next
// command, and none of them survives a resume of the session.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI } from "../../support/e2e.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { SandboxSession, useLoopbackHost } from "./support.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s), { perTest: true });
const cleanups = useCleanups();

/** The host outside the sandbox the commands connect to. */
const host = useLoopbackHost();

// Through the sandbox's proxy (HTTP_PROXY), as in network.test.ts. Without -f: a refusal's body is shown.
const fetchCommand = (port: number) => `curl -sS --noproxy '' -m 20 http://127.0.0.1:${port}/`;

/** Prompts delivered and not yet taken from the inbox. */
const prompts = (s: SandboxSession) => s.client.deliveries().filter((d) => d.name === "sandbox.approval_requested");

/** Runs `command`, expects it to ask about `kind`, answers `decision`; the result. */
async function asked(s: SandboxSession, command: string, kind: string, decision: string): Promise<{ outcome: string; output: string }> {
  const callId = await s.callShell(command);
  const ask = await s.approval();
  expect(ask).toMatchObject({ kind, call_id: callId });
  s.answer(ask.approval_id, decision);
  return s.result(callId);
}

const ALLOW_ONLY_EXAMPLE = "network:\n  allowed_domains: [only.example]\n";

describe("the :sandbox commands", () => {
  it("[sandbox.commands.network-and-mode] network allow|deny add|remove and mode take effect on the next command", async () => {
    const port = await host.start();
    const s = await SandboxSession.active(fake, cleanups, { globalYaml: ALLOW_ONLY_EXAMPLE });

    // allow add: the connection succeeds without asking.
    expect(await s.command("network", "allow", "add", "127.0.0.1")).toEqual({ ok: true, text: "network allow: added 127.0.0.1 (this session only)" });
    expect((await s.shell(fetchCommand(port))).output).toBe("hello from the host\n[exit code 0]");
    expect(host.hits).toBe(1);
    expect(prompts(s)).toHaveLength(0);

    // allow remove: it asks again.
    expect((await s.command("network", "allow", "remove", "127.0.0.1")).ok).toBe(true);
    expect((await asked(s, fetchCommand(port), "network", "allow")).output).toBe("hello from the host\n[exit code 0]");
    expect(host.hits).toBe(2);

    // deny add: refused at once, without asking; deny remove: it asks again.
    expect((await s.command("network", "deny", "add", "127.0.0.1")).ok).toBe(true);
    const denied = await s.shell(fetchCommand(port));
    expect(denied.output).not.toContain("hello from the host");
    expect(prompts(s)).toHaveLength(0);
    expect(host.hits).toBe(2);
    expect((await s.command("network", "deny", "remove", "127.0.0.1")).ok).toBe(true);
    expect((await asked(s, fetchCommand(port), "network", "allow")).output).toBe("hello from the host\n[exit code 0]");
    expect(host.hits).toBe(3);

    // mode non-interactive: a host no rule allows is refused at once, and the result names the fix.
    expect(await s.command("mode", "non-interactive")).toEqual({ ok: true, text: "sandbox mode: non-interactive (for this session)" });
    const refused = await s.shell(fetchCommand(port));
    expect(refused.output).not.toContain("hello from the host");
    expect(refused.output).toContain(`[sandbox: a connection to 127.0.0.1:${port} was refused: 127.0.0.1 is not on the network allowlist and nobody was asked (non-interactive); the user can allow it with \`:sandbox network allow add 127.0.0.1\` in the interactive UI]`);
    expect(prompts(s)).toHaveLength(0);
    expect(host.hits).toBe(3);
    // mode interactive: it asks again.
    expect((await s.command("mode", "interactive")).ok).toBe(true);
    const refusedByUser = await asked(s, fetchCommand(port), "network", "deny");
    expect(refusedByUser.output).not.toContain("hello from the host");
    expect(host.hits).toBe(3);
  });

  it("[sandbox.commands.filesystem] filesystem allow-write|allow-read|deny-read add|remove take effect on the next command", async () => {
    const s = await SandboxSession.active(fake, cleanups);
    const outside = s.outsideDir();
    const secretDir = join(s.w.home, "secret");
    mkdirSync(secretDir);
    const token = join(secretDir, "token");
    writeFileSync(token, "TOP-SECRET\n");

    // allow-write add: a write outside the project works without asking; remove: it is refused and asks again.
    expect(await s.command("filesystem", "allow-write", "add", outside)).toEqual({ ok: true, text: `filesystem allow-write: added ${outside} (this session only)` });
    expect((await s.shell(`echo one > ${join(outside, "one.txt")}`)).output).toBe("(no output)\n[exit code 0]");
    expect(readFileSync(join(outside, "one.txt"), "utf8")).toBe("one\n");
    expect(prompts(s)).toHaveLength(0);
    expect((await s.command("filesystem", "allow-write", "remove", outside)).ok).toBe(true);
    const refused = await asked(s, `echo two > ${join(outside, "two.txt")}`, "filesystem_write", "deny");
    expect(refused.output).toContain("Read-only file system");
    expect(existsSync(join(outside, "two.txt"))).toBe(false);

    // deny-read add: the file can no longer be read (and asks); allow-read add re-allows it inside
    // the denied folder; allow-read remove denies it again; deny-read remove opens the folder again.
    expect((await s.shell(`cat ${token}`)).output).toBe("TOP-SECRET\n[exit code 0]");
    expect((await s.command("filesystem", "deny-read", "add", secretDir)).ok).toBe(true);
    const unread = await asked(s, `cat ${token}`, "filesystem_read", "deny");
    expect(unread.output).not.toContain("TOP-SECRET");
    expect((await s.command("filesystem", "allow-read", "add", token)).ok).toBe(true);
    expect((await s.shell(`cat ${token}`)).output).toBe("TOP-SECRET\n[exit code 0]");
    expect((await s.command("filesystem", "allow-read", "remove", token)).ok).toBe(true);
    expect((await asked(s, `cat ${token}`, "filesystem_read", "deny")).output).not.toContain("TOP-SECRET");
    expect((await s.command("filesystem", "deny-read", "remove", secretDir)).ok).toBe(true);
    expect((await s.shell(`cat ${token}`)).output).toBe("TOP-SECRET\n[exit code 0]");

    // mode non-interactive: a write outside is refused at once with the command that would allow it.
    expect((await s.command("mode", "non-interactive")).ok).toBe(true);
    const quiet = await s.shell(`echo three > ${join(outside, "three.txt")}`);
    expect(quiet.output).toContain(`\`:sandbox filesystem allow-write add ${outside}\``);
    expect(quiet.output).toContain("nobody was asked (non-interactive)");
    expect(existsSync(join(outside, "three.txt"))).toBe(false);
    expect(prompts(s)).toHaveLength(0);
  });

  it("[sandbox.commands.grants-not-resumed] session grants and the session's mode do not survive a resume of the session", async () => {
    const port = await host.start();
    const s = await SandboxSession.active(fake, cleanups, { globalYaml: ALLOW_ONLY_EXAMPLE });
    const outside = s.outsideDir();
    expect((await s.command("network", "allow", "add", "127.0.0.1")).ok).toBe(true);
    expect((await s.command("filesystem", "allow-write", "add", outside)).ok).toBe(true);
    expect((await s.command("mode", "non-interactive")).ok).toBe(true);
    expect((await s.shell(fetchCommand(port))).output).toBe("hello from the host\n[exit code 0]");
    expect((await s.shell(`echo before > ${join(outside, "before.txt")}`)).output).toBe("(no output)\n[exit code 0]");
    expect(prompts(s)).toHaveLength(0);
    expect(host.hits).toBe(1);

    const resumed = await s.resume(cleanups);
    expect(await resumed.settled()).toMatchObject({ state: "active" });
    const shown = (await resumed.command("show")).text;
    expect(shown).toContain("mode: interactive (default)");
    expect(shown).toContain("network allowed (global):\n  only.example\nnetwork denied");
    expect(shown).not.toContain(`  ${outside}\n`);
    // The mode is interactive again and the grants are gone: the same connection asks again; the
    // same write is refused again and asks.
    const fetched = await asked(resumed, fetchCommand(port), "network", "deny");
    expect(fetched.output).not.toContain("hello from the host");
    expect(host.hits).toBe(1);
    const written = await asked(resumed, `echo after > ${join(outside, "after.txt")}`, "filesystem_write", "deny");
    expect(written.output).toContain("Read-only file system");
    expect(existsSync(join(outside, "after.txt"))).toBe(false);
  });
});
