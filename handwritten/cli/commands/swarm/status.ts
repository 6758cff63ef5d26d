// `tau swarm status [--json]`: the workers of the `tau swarm serve` running here, from its status file.
import { readFileSync } from "node:fs";
import { Command, Flags } from "@oclif/core";
import { TauError, errorOptions } from "../../errors.js";
import { escapeForLine } from "../session/escape.js";
import { processAlive } from "../../../sessions/index.js";
import { statusFile } from "./shared.js";

/** The status file is tau's own, but it is read as any file: bounded. */
const MAX_STATUS_BYTES = 4 * 1024 * 1024;

interface Status {
  pid: number;
  endpoint_id: string;
  addresses: string[];
  updated_at: string;
  workers: Array<{ name: string; endpoint_id: string; connected: boolean; incarnation?: string; commands: Record<string, number>; open_blockers: string[] }>;
}

export default class SwarmStatus extends Command {
  static override summary = "Show the workers of the swarm coordinator (`tau swarm serve`) running here: connected or not, incarnation, commands, open questions.";
  static override flags = { json: Flags.boolean({ description: "Print the status as JSON." }) };

  async run(): Promise<void> {
    const { flags } = await this.parse(SwarmStatus);
    const file = statusFile();
    let status: Status;
    try {
      const text = readFileSync(file, "utf8");
      if (text.length > MAX_STATUS_BYTES) throw new Error("too large");
      status = JSON.parse(text) as Status;
    } catch {
      const missing = new TauError("TAU-E0303", `no swarm coordinator has run here (${file}); start one with tau swarm serve`);
      return this.error(missing.message, errorOptions(missing));
    }
    const running = processAlive(status.pid);
    if (flags.json) return this.log(JSON.stringify({ ...status, running }));
    this.log(`coordinator ${status.endpoint_id} ${running ? `running (pid ${status.pid})` : "not running"}, listening on ${status.addresses.join(", ")}; as of ${status.updated_at}`);
    for (const w of status.workers) {
      const counts = Object.entries(w.commands).map(([k, n]) => `${n} ${k}`).join(", ") || "no commands";
      const blockers = w.open_blockers.length > 0 ? `; open questions ${w.open_blockers.join(", ")}` : "";
      this.log(escapeForLine(`  ${w.name}  ${w.connected && running ? "connected" : "not connected"}  ${w.incarnation !== undefined ? `incarnation ${w.incarnation}` : "never connected"}  ${counts}${blockers}`));
    }
  }
}
