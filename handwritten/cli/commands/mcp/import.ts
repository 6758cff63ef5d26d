// `tau mcp import [FILE…] [--dry-run]`: another agent's MCP servers as tau's drop-ins.
import { Command, Flags } from "@oclif/core";
import { existsSync } from "node:fs";
import { ConfigError, addMcpServer, resolveRoots } from "../../../config/index.js";
import { defaultImportFiles, readMcpImport } from "../../../config/mcp-import.js";
import { TauError, errorOptions } from "../../errors.js";
import { escapeForLine } from "../session/escape.js";

export default class McpImport extends Command {
  static override summary = "Import MCP servers from Claude Code, Cursor, Codex or opencode configuration.";
  static override description =
    "Reads each FILE (or, without one, this folder's .mcp.json and opencode.json, then ~/.claude.json with this folder's " +
    "project entry, ~/.codex/config.toml and ~/.config/opencode/opencode.json) and adds each server as `tau mcp add` " +
    "would, its name rewritten to tau's rule (my-files → my_files). A server whose name is configured already is " +
    "skipped and named; whatever an entry holds that tau's cannot say is named too. --dry-run writes nothing.";
  static override examples = ["<%= config.bin %> mcp import", "<%= config.bin %> mcp import ~/.codex/config.toml --dry-run"];
  static override strict = false;
  static override args = {};
  static override flags = { "dry-run": Flags.boolean({ description: "Show what would be added; write nothing." }) };

  async run(): Promise<void> {
    const { argv, flags } = await this.parse(McpImport);
    const roots = resolveRoots();
    const project = process.cwd();
    const named = argv as string[];
    const files = named.length > 0 ? named : defaultImportFiles(project).filter((f) => existsSync(f));
    try {
      if (files.length === 0) throw new ConfigError(`no configuration to import: none of ${defaultImportFiles(project).join(", ")} exists; name a file`);
      let added = 0;
      const seen = new Set<string>();
      for (const file of files) {
        const found = await readMcpImport(file, project);
        this.log(escapeForLine(`${file} (${found.source}): ${found.servers.length} server${found.servers.length === 1 ? "" : "s"}`));
        for (const note of found.notes) this.log(escapeForLine(`  note: ${note}`));
        for (const s of found.servers) {
          const label = s.name === s.original ? s.name : `${s.name} (was ${s.original})`;
          if (seen.has(s.name)) {
            this.log(escapeForLine(`  skipped ${label}: imported from an earlier file`));
            continue;
          }
          seen.add(s.name);
          if (flags["dry-run"]) {
            this.log(escapeForLine(`  would add ${label}: ${s.def.url ?? [s.def.command, ...(s.def.args ?? [])].join(" ")}`));
            continue;
          }
          try {
            await addMcpServer(roots.config, project, s.name, s.def, false);
            added++;
            this.log(escapeForLine(`  added ${label}`));
          } catch (err) {
            if (!(err instanceof ConfigError)) throw err;
            this.log(escapeForLine(`  skipped ${label}: ${err.message}`));
          }
        }
      }
      if (!flags["dry-run"]) this.log(`${added} added; tau mcp list shows them, from the next session on`);
    } catch (err) {
      if (err instanceof ConfigError) this.error(err.message, errorOptions(new TauError("TAU-E0201", err.message)));
      throw err;
    }
  }
}
