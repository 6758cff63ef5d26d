// `tau mcp add|list|remove` (SPEC-mcp, "Commands"): through the real `tau` in a fresh home — a
// stdio and a remote server added as drop-ins (0600) and listed without their secrets' values, a
// name taken refused unless --force replaces what `tau mcp add` wrote, bad input refused with a
// message and nothing written, and removal.
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { exitCodeOf } from "../../../handwritten/cli/errors.js";
import { useCleanups, workspaceIn } from "../../support/e2e.js";
import { runTau } from "../../support/run-tau.js";

const cleanups = useCleanups();

/** A refusal's message as one line (the error printer wraps long ones under a ` ›` margin). */
const said = (stderr: string) => stderr.replace(/\s*\n\s*›\s*/g, " ");

describe("tau mcp", () => {
  it("[mcp.cli.add-list-remove] adds stdio and remote servers as drop-ins, lists them without secret values, refuses what is taken or malformed, and removes them", async () => {
    const w = workspaceIn(cleanups, "mcp_servers:\n  kept:\n    command: kept-server\n");
    const tau = (args: string[]) => runTau(args, { env: w.env, cwd: w.project });
    const dropIn = (name: string) => join(w.home, "config", "harness.d", `mcp-${name}.yaml`);

    const none = await tau(["mcp", "list"]);
    expect(none.stdout.trim()).toBe("kept  stdio  kept-server  [sandboxed]");

    const files = await tau(["mcp", "add", "files", "-e", "FS_TOKEN=s3cret-value", "--", "npx", "-y", "some-fs-server", "/srv"]);
    expect(files.code, files.stderr).toBe(0);
    expect(files.stdout).toContain(`wrote ${dropIn("files")}`);
    expect(statSync(dropIn("files")).mode & 0o777).toBe(0o600);
    const remote = await tau(["mcp", "add", "docs", "--url", "https://mcp.example.com/mcp", "--header", "Authorization: Bearer tok-123"]);
    expect(remote.code, remote.stderr).toBe(0);
    const host = await tau(["mcp", "add", "web", "--allow-host", "api.example.com", "--allow-host", "*.cdn.example", "--ask", "always", "--", "web-server"]);
    expect(host.code, host.stderr).toBe(0);
    const loose = await tau(["mcp", "add", "loose", "--no-sandbox", "--", "loose-server"]);
    expect(loose.code, loose.stderr).toBe(0);
    expect(readFileSync(dropIn("loose"), "utf8")).toContain("sandbox: false");

    const listed = await tau(["mcp", "list"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split("\n")).toEqual([
      "docs  http  https://mcp.example.com/mcp  [remote]  (header Authorization)",
      "files  stdio  npx -y some-fs-server /srv  [sandboxed]  (env FS_TOKEN)",
      "kept  stdio  kept-server  [sandboxed]",
      "loose  stdio  loose-server  [unsandboxed]",
      "web  stdio  web-server  [sandboxed, ask always, host api.example.com, host *.cdn.example]",
    ]);
    const json = JSON.parse((await tau(["mcp", "list", "--json"])).stdout) as Array<{ name: string; env: string[]; sandbox: string; ask?: string; allowed_hosts: string[] }>;
    expect(json.map((r) => r.name)).toEqual(["docs", "files", "kept", "loose", "web"]);
    expect(json.find((r) => r.name === "web")).toMatchObject({ sandbox: "sandboxed", ask: "always", allowed_hosts: ["api.example.com", "*.cdn.example"] });
    for (const out of [listed.stdout, listed.stderr, JSON.stringify(json)]) {
      expect(out).not.toContain("s3cret-value");
      expect(out).not.toContain("tok-123");
    }

    // Taken names: one tau added needs --force; one the user wrote is edited where it is.
    const again = await tau(["mcp", "add", "files", "--", "other"]);
    expect(again.code).toBe(exitCodeOf("TAU-E0201"));
    expect(said(again.stderr)).toContain("an MCP server named files was added already; use --force to replace it");
    const forced = await tau(["mcp", "add", "files", "--force", "--", "other-server"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(dropIn("files"), "utf8")).toContain("other-server");
    const theirs = await tau(["mcp", "add", "kept", "--force", "--", "x"]);
    expect(theirs.code).toBe(exitCodeOf("TAU-E0201"));
    expect(said(theirs.stderr)).toContain("an MCP server named kept is configured already");

    // Malformed: nothing is written.
    const cases: Array<[string[], string]> = [
      [["mcp", "add", "My-Tools", "--", "x"], 'try "my_tools"'],
      [["mcp", "add", "neither"], "give the server's command after `--`"],
      [["mcp", "add", "both", "--url", "https://a.example/mcp", "--", "x"], "give either --url or a command"],
      [["mcp", "add", "badenv", "-e", "NOEQUALS", "--", "x"], "--env"],
      [["mcp", "add", "badurl", "--url", "ftp://a.example/mcp"], "url"],
      [["mcp", "add", "remotebox", "--url", "https://a.example/mcp", "--no-sandbox"], "--no-sandbox and --allow-host are for a local server"],
      [["mcp", "add", "boxhost", "--no-sandbox", "--allow-host", "a.example", "--", "x"], "with --no-sandbox the server is not sandboxed"],
      [["mcp", "add", "badask", "--ask", "sometimes", "--", "x"], "sometimes"],
      [["mcp", "add", "badhost", "--allow-host", "not a host", "--", "x"], "allowed_hosts"],
    ];
    for (const [args, message] of cases) {
      const r = await tau(args);
      expect(r.code, args.join(" ")).toBe(exitCodeOf("TAU-E0201"));
      expect(said(r.stderr), args.join(" ")).toContain(message);
      expect(existsSync(dropIn(args[2] as string))).toBe(false);
    }

    const removed = await tau(["mcp", "remove", "files"]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(dropIn("files"))).toBe(false);
    const gone = await tau(["mcp", "remove", "files"]);
    expect(gone.code).toBe(exitCodeOf("TAU-E0303"));
    expect(said(gone.stderr)).toContain("no MCP server files was added with `tau mcp add`");
    writeFileSync(join(w.home, "config", "harness.yaml"), "mcp_servers: {}\n");
    expect((await tau(["mcp", "list"])).stdout.trim().split("\n")).toEqual([
      "docs  http  https://mcp.example.com/mcp  [remote]  (header Authorization)",
      "loose  stdio  loose-server  [unsandboxed]",
      "web  stdio  web-server  [sandboxed, ask always, host api.example.com, host *.cdn.example]",
    ]);
  });

  it("[mcp.cli.import] imports Claude Code, Codex and opencode servers as drop-ins, names rewritten, what tau cannot say noted, nothing twice", async () => {
    const w = workspaceIn(cleanups);
    const env = { ...w.env, HOME: w.home };
    const tau = (args: string[]) => runTau(args, { env, cwd: w.project });
    const dropIns = () => (existsSync(join(w.home, "config", "harness.d")) ? readdirSync(join(w.home, "config", "harness.d")).sort() : []);
    const none = await tau(["mcp", "import"]);
    expect(none.code).toBe(exitCodeOf("TAU-E0201"));
    expect(said(none.stderr)).toContain("no configuration to import");

    writeFileSync(join(w.project, ".mcp.json"), JSON.stringify({ mcpServers: {
      "my-files": { command: "npx", args: ["-y", "fs-server", "/srv"], env: { FS_TOKEN: "s3cret" } },
      remote: { type: "sse", url: "https://mcp.example.com/sse", headers: { Authorization: "Bearer tok-1" } },
      "!!!": { command: "x" },
      broken: { args: ["no command"] },
    } }));
    mkdirSync(join(w.home, ".codex"));
    writeFileSync(join(w.home, ".codex", "config.toml"), [
      "[mcp_servers.my_files]", 'command = "other"', "",
      "[mcp_servers.docs]", 'url = "https://docs.example.com/mcp"', 'bearer_token_env_var = "DOCS_TOKEN"', "startup_timeout_sec = 20", "tool_timeout_sec = 90", "",
    ].join("\n"));
    mkdirSync(join(w.home, ".config", "opencode"), { recursive: true });
    writeFileSync(join(w.home, ".config", "opencode", "opencode.json"), JSON.stringify({ mcp: {
      "git.tools": { type: "local", command: ["uvx", "mcp-server-git"], environment: { GIT_DIR: "/x" } },
      later: { type: "remote", url: "https://later.example.com/mcp", enabled: false },
    } }));

    const dry = await tau(["mcp", "import", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("would add my_files (was my-files): npx -y fs-server /srv");
    expect(dropIns()).toEqual([]);

    const r = await tau(["mcp", "import"]);
    expect(r.code, r.stderr).toBe(0);
    const out = r.stdout;
    expect(out).toContain(`${join(w.project, ".mcp.json")} (claude): 2 servers`);
    expect(out).toContain('note: "!!!": no server name can be made of it');
    expect(out).toContain('note: "broken": neither a command nor a url');
    expect(out).toContain('note: "remote": an SSE server');
    expect(out).toContain("skipped my_files: imported from an earlier file");
    expect(out).toContain('note: "docs": its bearer token comes from $DOCS_TOKEN in Codex');
    expect(out).toContain("added git_tools (was git.tools)");
    expect(out).toContain("5 added");
    expect(out).not.toContain("s3cret");
    expect(dropIns()).toEqual(["mcp-docs.yaml", "mcp-git_tools.yaml", "mcp-later.yaml", "mcp-my_files.yaml", "mcp-remote.yaml"]);
    const docs = readFileSync(join(w.home, "config", "harness.d", "mcp-docs.yaml"), "utf8");
    expect(docs).toContain("startup_timeout_ms: 20000");
    expect(docs).toContain("call_timeout_ms: 90000");
    // A disabled server is imported disabled: listed nowhere a session would start it.
    const listed = (await tau(["mcp", "list"])).stdout.trim().split("\n");
    expect(listed).toEqual([
      "docs  http  https://docs.example.com/mcp  [remote]",
      "git_tools  stdio  uvx mcp-server-git  [sandboxed]  (env GIT_DIR)",
      "my_files  stdio  npx -y fs-server /srv  [sandboxed]  (env FS_TOKEN)",
      "remote  http  https://mcp.example.com/sse  [remote]  (header Authorization)",
    ]);
    // Again: every name is taken now, and nothing changes.
    const again = await tau(["mcp", "import"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("0 added");
    expect(again.stdout).toContain("skipped docs: an MCP server named docs was added already");
    const bad = await tau(["mcp", "import", join(w.project, "nope.json")]);
    expect(bad.code).toBe(exitCodeOf("TAU-E0201"));
    expect(said(bad.stderr)).toContain("nope.json: no such file");
  });
});
