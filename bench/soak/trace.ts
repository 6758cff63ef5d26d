// With `--verbose`: a round's story, one line per delivery that matters and per model request.
import type { SoakModel } from "./model.js";
import type { SoakSession } from "./session.js";

const TRACED = /^(agent\.(prompt_|outer_|compaction_|started)|tool\.(started|request)|provider\.tool_|handoff\.(state|command_result)|session\.handed_off|extension\.(exited|ready))/;

export function traceOf(s: SoakSession | undefined, model: SoakModel): string[] {
  const out: string[] = [];
  for (const d of s?.allDeliveries() ?? []) {
    if (d.replay || !TRACED.test(d.name)) continue;
    const x = d.data;
    const brief = [x.agent_id, x.prompt_id, x.call_id, x.tool, x.round, x.mode, x.outcome, x.phase, x.deferred, x.trigger, x.ok, x.text === undefined ? undefined : String(x.text).slice(0, 60)].filter((v) => v !== undefined).join(" ");
    out.push(`boot ${d.boot} ${d.name} ${brief}`);
  }
  for (const r of model.requests) out.push(`request boot ${r.boot} ${r.kind} ${r.script ?? ""}#${r.round ?? ""} ${r.key.slice(0, 100)}`);
  return out;
}

