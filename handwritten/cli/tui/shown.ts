// What the UI shows, in words, of what was written for a model or a machine: an agent tool's answer,
// a call's arguments on one line, a running time, and a model's lasting failure on the status line.

/** What the status line says of a model whose last request failed for a reason that will not pass by itself. */
export const MODEL_PROBLEMS: Readonly<Record<string, string>> = {
  authentication: "key refused",
  network: "unreachable",
  timeout: "not answering",
  rate_limited: "rate limited",
  server_error: "server failing",
  context_window_exceeded: "context full",
};

/** One `<agent_result …>` frame of an agent tool's answer (agent-tools.ts, exactCloseFrame): attributes escaped, so none holds a quote. */
const AGENT_RESULT = /<agent_result agent="([^"]*)"(?: name="([^"]*)")? outcome="([^"]*)">\n([\s\S]*?)\n<\/agent_result>/g;

/**
 * A tool's output as a person reads it: the agent tools' JSON and frames (written for the model)
 * become lines of words; every other tool's output is shown as it is. The model reads the original.
 */
export function shownOutput(tool: string, output: string): string {
  if (tool === "agent_start") {
    try {
      const v = JSON.parse(output) as { agent_id?: unknown; role?: unknown };
      if (typeof v.agent_id === "string") return `started ${v.agent_id}${typeof v.role === "string" ? ` (role ${v.role})` : ""}`;
    } catch {
      // not the harness's answer: shown as it is
    }
    return output;
  }
  if (tool !== "agent_wait") return output;
  const parts: string[] = [];
  for (const m of output.matchAll(AGENT_RESULT)) {
    const name = m[2];
    parts.push(`${name !== undefined ? `${name} ` : ""}[${m[1] ?? ""}] ${m[3] ?? ""}:\n${m[4] ?? ""}`);
  }
  return parts.length > 0 ? parts.join("\n") : output;
}

/**
 * What a call is about, on one line: its command, its path (with a search pattern, or a read's
 * first line), else its scalar arguments as `key=value`; nested values and raw JSON are left out.
 */
export function callSummary(json: string): string {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return ""; // not JSON (arguments still streaming, or broken): nothing worth showing
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) return "";
  const o = v as Record<string, unknown>;
  const str = (k: string) => (typeof o[k] === "string" && o[k] !== "" ? (o[k] as string) : undefined);
  const command = str("command") ?? str("cmd");
  if (command !== undefined) return command;
  const path = str("path") ?? str("file_path") ?? str("file") ?? str("dir");
  const pattern = str("pattern") ?? str("glob") ?? str("query");
  if (pattern !== undefined) return path !== undefined ? `${pattern}  in ${path}` : pattern;
  if (path !== undefined) return typeof o.offset === "number" ? `${path}:${o.offset}` : path;
  return Object.entries(o)
    .filter(([, x]) => typeof x === "string" || typeof x === "number" || typeof x === "boolean")
    .map(([k, x]) => `${k}=${String(x)}`)
    .join(" ");
}

/** A running time as `7s` or `2m05s`. */
export function elapsed(ms: number): string {
  const sec = Math.max(0, Math.floor(ms / 1000));
  return sec < 60 ? `${sec}s` : `${Math.floor(sec / 60)}m${String(sec % 60).padStart(2, "0")}s`;
}
