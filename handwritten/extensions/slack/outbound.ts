// What the agent sends to Slack (SPEC-slack, "Agent sends"): plain text only. Raw mention and
// control markup (`<!channel>`, `<!here>`, `<!subteam^…>`, `<@U…>`, `<#C…>`) is refused with a
// clear error; every other `&`, `<` and `>` is escaped, so nothing the model writes becomes markup.
// The one mention a reply may carry is built here from the verified human bound to its selector.

/** Longest text the bridge sends (Slack truncates `chat.postMessage` text past 40,000 characters). */
export const MAX_SEND_CHARS = 4000;

const CONTROL_MARKUP = /<\s*[!@#]/;

/** Why `text` cannot be sent, or undefined when it can. */
export function sendProblem(text: string): string | undefined {
  if (text.trim() === "") return "text is empty";
  if ([...text].length > MAX_SEND_CHARS) return `text is longer than ${MAX_SEND_CHARS} characters`;
  if (CONTROL_MARKUP.test(text)) return "text contains raw Slack mention or control markup (<!…>, <@…>, <#…>); write plain text, and set mention_source to name the person you answer";
  return undefined;
}

/** The body posted: escaped text, with the source mention when asked for. Frozen before the first attempt. */
export function sendBody(text: string, mention: string | undefined): string {
  const escaped = text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return mention === undefined ? escaped : `<@${mention}> ${escaped}`;
}
