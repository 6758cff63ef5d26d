// The official Slack SDK, wired for tau (SPEC-slack, DECISION-slack-sdk): @slack/web-api for the
// Web API methods and @slack/socket-mode for the inbound connection, both at the configured base
// URL. Their logs go to stderr (the session's extensions.log) at warn and error only, through
// logLine, which cuts out anything shaped like a Slack token. Loaded after `ready` (it takes about
// half a second), so the extension's start-up budget is not spent on it.
import { SocketModeClient } from "@slack/socket-mode";
import { LogLevel, WebClient, type Logger } from "@slack/web-api";
import { logLine } from "./log.js";

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
