// `tau ext mcp`: one MCP server's tools as tau tools (SPEC-mcp). The harness starts one instance per
// server configured under `mcp_servers` (instance `mcp-SERVER`, tool prefix `mcp__SERVER__`), so
// role policy denies a server's tools by `ext:mcp-SERVER`, all MCP tools by `group:mcp`, one tool by
// its name. The instance is ready at once (unless `wait_at_start`): the server starts beside the
// session and its tools join when it is ready.
import { resolveRoots } from "../../config/index.js";
import { Extension } from "../../sdk/index.js";
import { ServerSandbox } from "../shell/sandbox/index.js";
import { askOf } from "./names.js";
import { OfferedTools } from "./offered-tools.js";
import { Elicitations } from "./elicitation.js";
import { Samplings } from "./sampling.js";
import { ServerReport } from "./report.js";
import { McpServer, type ServerState } from "./server.js";

export async function main(args: readonly string[] = []): Promise<void> {
  if (args[0] === "--login") {
    const { signIn } = await import("./login.js");
    process.exitCode = await signIn();
    return;
  }
  const ext = await Extension.connect();
  const settings = ext.settings("mcp");
  if (settings === undefined) return;
  const { server: name, definition } = settings;
  const report = new ServerReport(ext, name);
  const elicitations = new Elicitations(ext, (level, text) => report.say(level, text));
  const tools = new OfferedTools(ext, { name, ask: () => askOf(definition, report.runsAs), headless: settings.sandbox?.approval === "never", report, elicitations });
  const projectRoot = process.cwd();
  // A stdio server runs inside the sandbox unless its entry says otherwise (SPEC-mcp, "The sandbox").
  const sandbox =
    definition.command !== undefined && definition.sandbox !== false
      ? new ServerSandbox({
          owner: `mcp-${name}`,
          projectRoot,
          roots: resolveRoots(),
          ...(settings.sandbox !== undefined ? { launch: settings.sandbox } : {}),
          allowedHosts: definition.allowed_hosts ?? [],
          refused: (host, port) => report.refusedHost(host, port),
        })
      : undefined;
  const samplings = definition.sampling !== undefined ? new Samplings(ext, definition.sampling, (level, text) => report.say(level, text)) : undefined;
  const server = new McpServer(
    name,
    definition,
    projectRoot,
    {
      state: (state: ServerState, detail) => report.changed(state, detail),
      tools: (listed) => tools.offer(listed),
      note: (level, text) => report.say(level, text),
      runs: (how, why) => report.runs(how, why),
      // A run with no UI to ask (`--approval never`, as `tau run`) offers no elicitation: a server that asks anyway is refused.
      ...(settings.sandbox?.approval !== "never" ? { elicit: (params, signal) => elicitations.ask(params, signal) } : {}),
      // Sampling only when the entry configures it (SPEC-mcp, "Sampling").
      ...(samplings !== undefined ? { sample: (params, signal) => samplings.sample(params, signal) } : {}),
    },
    sandbox,
  );
  tools.server = server;
  ext.onHarnessGone(() => server.stop());
  report.changed("starting", undefined);
  if (definition.url !== undefined) report.runs("remote");
  else if (sandbox === undefined) report.runs("unsandboxed", "sandbox: false in its entry");
  server.start();
  if (definition.wait_at_start === true) await server.firstStart;
  ext.ready();
}

