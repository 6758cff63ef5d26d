// The official Slack SDK, wired for tau (SPEC-slack, DECISION-slack-sdk): @slack/web-api for the
// Web API methods and @slack/socket-mode for the inbound connection, both at the configured base
// URL. Their logs go to stderr (the session's extensions.log) at warn and error only, with anything
// shaped like a Slack token cut out: tokens reach this process only in `configure` and never leave
// it except in the Authorization header.
import { SocketModeClient } from "@slack/socket-mode";
import { LogLevel, WebClient, type Logger } from "@slack/web-api";

const TOKEN = /\b(xox[a-z]|xapp)-[A-Za-z0-9-]+/g;

/** One stderr line, bounded, with tokens cut out. */
export function logLine(text: string): void {
  process.stderr.write(`slack: ${text.replace(TOKEN, "[token]").replace(/[\r\n]+/g, " ").slice(0, 500)}\n`);
}

function quietLogger(): Logger {
  let level = LogLevel.WARN;
  const say = (what: string, args: unknown[]): void => logLine(`${what}: ${args.map((a) => (a instanceof Error ? a.message : String(a))).join(" ")}`);
  return {
    debug: () => {},
    info: () => {},
    warn: (...args: unknown[]) => say("warning", args),
    error: (...args: unknown[]) => say("error", args),
    setLevel: (l: LogLevel) => void (level = l),
    getLevel: () => level,
    setName: () => {},
  };
}

/** A Web API call's failure, with Slack's error code when it answered one. */
export function slackError(err: unknown): string {
  const data = (err as { data?: { error?: unknown } }).data;
  if (typeof data?.error === "string") return data.error.slice(0, 80);
  return ((err as Error).message ?? String(err)).replace(TOKEN, "[token]").slice(0, 200);
}

export interface SlackClients {
  readonly web: WebClient;
  readonly socket: SocketModeClient;
}

export function slackClients(o: { apiUrl: string; botToken: string; appToken: string }): SlackClients {
  const logger = quietLogger();
  // Two retries at most: a send's body is frozen before the first attempt, so a retry repeats it exactly.
  const web = new WebClient(o.botToken, { slackApiUrl: o.apiUrl, logger, retryConfig: { retries: 2, factor: 1, minTimeout: 200, maxTimeout: 1000 }, timeout: 15_000 });
  const socket = new SocketModeClient({
    appToken: o.appToken,
    logger,
    clientOptions: { slackApiUrl: o.apiUrl, retryConfig: { retries: 2, factor: 1, minTimeout: 200, maxTimeout: 1000 }, timeout: 15_000 },
  });
  return { web, socket };
}
