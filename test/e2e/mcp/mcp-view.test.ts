// `:mcp` in the real terminal UI (SPEC-mcp, "State"): the session's MCP servers with the state each
// last reported — a working one ready with its tools by their tau names, one that hung at start
// failed with its error — asked of the daemon over the socket and shown in a pseudo-terminal.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { has, quitTau, startTau, tuiWorkspace } from "../../support/pty.js";
import type { FakeOpenAI } from "../../support/fake-openai.js";
import { waitFor } from "../../support/daemon.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));
const cleanups = useCleanups();
const FIXTURE = join(import.meta.dirname, "../../fixtures/mcp/server.mjs");

describe(":mcp", () => {
  it("[mcp.tui.state-view] :mcp lists each server with the state it last reported, its last error and its tools, and the status line counts them; without servers it says how to add one", async () => {
    const servers = {
      good: { command: process.execPath, args: [FIXTURE, "tools"] },
      stuck: { command: process.execPath, args: [FIXTURE, "hang"], startup_timeout_ms: 300 },
    };
    const w = tuiWorkspace(workspaceIn(cleanups, JSON.stringify({ model: "fake-model", mcp_servers: servers })), fake);
    const t = startTau(cleanups, w, [], { cols: 240, rows: 40 });
    await t.waitFor(has(" · ready"), "ready", 60_000);
    // Both servers settle (the good one ready, the stuck one failed): each says so in the session's extensions.log.
    const log = () => {
      const [session] = existsSync(join(w.home, "state", "sessions")) ? readdirSync(join(w.home, "state", "sessions")) : [];
      const file = session === undefined ? "" : join(w.home, "state", "sessions", session, "extensions.log");
      return file !== "" && existsSync(file) ? readFileSync(file, "utf8") : "";
    };
    await waitFor(() => log().includes("mcp server good: ready") && log().includes("mcp server stuck: failed"), "both servers settled", 60_000);
    // The status line counts them: one ready of two, the other failed (or already trying again).
    await t.waitFor((s) => s.some((l) => / · mcp 1\/2 \(1 (failed|restarting)\)/.test(l)), "the MCP servers on the status line", 20_000);
    t.type(":mcp\r");
    await t.waitFor((s) => s.some((l) => l.startsWith("MCP servers (2):")), ":mcp's answer", 20_000);
    const screen = t.screen();
    const at = screen.findLastIndex((l) => l.startsWith("MCP servers (2):"));
    const view = screen.slice(at, at + 8).map((l) => l.trimEnd());
    const good = view.indexOf("  good: ready");
    const stuck = view.findIndex((l) => l.startsWith("  stuck: "));
    expect(good, view.join("\n")).toBe(1);
    // What it said since it was ready: the tool it could not offer, by name.
    expect(view.slice(good + 1, stuck)).toContainEqual("    said: tool hugeSchema: its input schema is larger than 65536 bytes; it is not offered");
    expect(view[stuck - 1]).toMatch(/^ {4}tools \(10\): mcp__good__ask, mcp__good__big, mcp__good__crash, mcp__good__echo, mcp__good__form, mcp__good__grow, mcp__good__probe, mcp__good__read, mcp__good__sample, mcp__good__sleep$/);
    // Failed, or already trying again after its backoff (0.5 s, 1 s, …): either way with its last error.
    expect(view[stuck]).toMatch(/^ {2}stuck: (failed|restarting) \(did not become ready within its start-up timeout \(300 ms\)/);
    expect(view[stuck + 1]).toBe("    tools (0): none yet");
    expect(await quitTau(t)).toBe(0);

    const bare = tuiWorkspace(workspaceIn(cleanups), fake);
    const u = startTau(cleanups, bare, [], { cols: 160, rows: 40 });
    await u.waitFor(has(" · ready"), "ready", 60_000);
    u.type(":mcp\r");
    await u.waitFor(has("no MCP servers in this session (tau mcp add NAME -- COMMAND adds one"), "the answer without servers", 20_000);
    expect(u.screen().join("\n")).not.toContain(" · mcp ");
    expect(await quitTau(u)).toBe(0);
  }, 120_000);
});
