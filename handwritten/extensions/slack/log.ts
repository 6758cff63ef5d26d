// The bridge's log lines (stderr: the session's extensions.log), bounded, one line each, with
// anything shaped like a Slack token cut out: tokens reach this process only in `configure` and
// never leave it except in the Authorization header of Slack calls.
const TOKEN = /\b(xox[a-z]|xapp)-[A-Za-z0-9-]+/g;

/** One stderr line, bounded, with tokens cut out. */
export function logLine(text: string): void {
  // eslint-disable-next-line no-control-regex
  process.stderr.write(`slack: ${text.replace(TOKEN, "[token]").replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").slice(0, 500)}\n`);
}

/** A Web API call's failure, with Slack's error code when it answered one. */
export function slackError(err: unknown): string {
  const data = (err as { data?: { error?: unknown } }).data;
  if (typeof data?.error === "string") return data.error.slice(0, 80);
  return ((err as Error).message ?? String(err)).replace(TOKEN, "[token]").slice(0, 200);
}
