// `tau ext gmail` (SPEC-gmail): search, read and draft Gmail, and send a draft after the user's
// approval each time. The harness starts it when harness.yaml has `gmail:`. Sign-in is `:gmail
// login` / `:gmail code CODE` in the interactive UI, colon commands this extension owns
// (SPEC-extension-commands): the code reaches this process only.
import { Extension, type CommandAnswer } from "../../sdk/index.js";
import { resolveRoots } from "../../config/paths.js";
import { readSecret } from "../../config/secrets.js";
import { Elicitations } from "../mcp/elicitation.js";
import { GmailApi } from "./api.js";
import { GmailHttp } from "./http.js";
import { CLIENT_SECRET_SECRET, DEFAULT_URLS } from "./limits.js";
import { GmailAuth } from "./oauth.js";
import { gmailTools } from "./tools.js";

const USAGE = ":gmail login | :gmail code CODE | :gmail status | :gmail logout";

export async function main(): Promise<void> {
  const ext = await Extension.connect();
  const settings = ext.settings("gmail");
  if (settings === undefined) return;
  const { gmail, sandbox } = settings;
  const urls: Record<"auth" | "token" | "api", URL> = {} as never;
  for (const [k, raw] of [["auth", gmail.auth_url], ["token", gmail.token_url], ["api", gmail.api_url]] as const) {
    try {
      urls[k] = new URL(raw ?? DEFAULT_URLS[k]);
      if (urls[k].protocol !== "https:" && urls[k].protocol !== "http:") throw new Error("not http(s)");
    } catch {
      return ext.configError(`setting gmail.${k}_url: must be an http:// or https:// URL`);
    }
  }
  const configRoot = resolveRoots().config;
  let clientSecret: string | undefined;
  try {
    clientSecret = readSecret(configRoot, CLIENT_SECRET_SECRET);
  } catch (err) {
    return ext.configError((err as Error).message.slice(0, 1000));
  }
  const http = new GmailHttp();
  const say = (level: "info" | "warning" | "error", text: string): void => ext.notice(level, text);
  const auth = new GmailAuth(http, { authUrl: urls.auth, tokenUrl: urls.token, clientId: gmail.client_id, ...(clientSecret !== undefined ? { clientSecret } : {}) }, configRoot, say);
  ext.onHarnessGone(async () => {
    auth.close();
    await http.close();
  });
  ext.registerCommand({
    name: "gmail",
    usage: USAGE,
    summary: "sign tau in to Gmail (login, then code CODE when the browser is on another machine), show the state, or sign out",
    sensitive: true,
    run: (args): Promise<CommandAnswer> | CommandAnswer => {
      const [sub, ...rest] = args;
      if (sub === "login" && rest.length === 0) return auth.login();
      if (sub === "code" && rest.length === 1) return auth.finish(rest[0] as string);
      if (sub === "status" && rest.length === 0) return auth.status();
      if (sub === "logout" && rest.length === 0) return auth.logout();
      return { level: "error", text: `usage: ${USAGE}` };
    },
  });
  const api = new GmailApi(http, auth, urls.api);
  const approvals = new Elicitations(ext, say);
  for (const tool of gmailTools({ api, approvals, headless: sandbox?.approval === "never" })) ext.registerTool(tool);
  ext.ready();
}
