// The `chatgpt_ws` profile of `tau ext provider` (SPEC-provider-websocket): the configured models
// (the family has no model listing), the sign-in's tokens read from their file under the config
// root, and every `provider.request` run over the WebSocket family. Lifecycle and quota waits are
// extension notices, built from fixed words, endpoints and numbers: never a token or a header.
import { resolveRoots } from "../../config/index.js";
import type { Extension } from "../../sdk/index.js";
import type { ModelInfo, ProviderSettings } from "../../../generated/index.js";
import { ChatgptWsClient } from "./chatgpt-ws.js";
import { DeltaBatcher } from "./delta-batcher.js";
import { createEgressPolicy } from "./egress.js";
import { DEFAULT_AUTH_URL, TokenSource } from "./oauth.js";
import { readProxySettings } from "./proxy-settings.js";

const OAUTH_SECRET = /^provider-([a-z0-9][a-z0-9_-]{0,62})-oauth$/;

export async function serveChatgptWs(ext: Extension, cfg: ProviderSettings): Promise<void> {
  if (!cfg.base_url) return ext.configError("chatgpt_ws needs base_url");
  const models: ModelInfo[] = cfg.models ?? [];
  if (models.length === 0) return ext.configError("no models configured for this provider (chatgpt_ws has no model listing)");
  const match = OAUTH_SECRET.exec(cfg.oauth_secret ?? "");
  if (!match) return ext.configError("chatgpt_ws needs oauth_secret (provider-NAME-oauth)");
  try {
    readProxySettings();
  } catch (err) {
    return ext.configError(`proxy settings: ${(err as Error).message}`);
  }
  const egress = createEgressPolicy({});
  const notice = (level: "info" | "warning", text: string) => ext.notice(level, `chatgpt_ws: ${text}`);
  const tokens = new TokenSource(egress, resolveRoots().config, cfg.oauth_secret as string, match[1] as string, cfg.auth_url ?? DEFAULT_AUTH_URL, () => notice("info", "the sign-in was refreshed"));
  const client = new ChatgptWsClient({ baseUrl: cfg.base_url, tokens, notice });
  const running = new Map<string, AbortController>();
  void ext.emit("provider.models_declared", { models, listing: "configured" });
  ext.onDirect("provider.cancel_request", (data) => running.get(`${data.prompt_id}/${data.round}`)?.abort());
  ext.onProviderRequest((req) => {
    const key = `${req.prompt_id}/${req.round}`;
    const controller = new AbortController();
    running.set(key, controller);
    const deltas = new DeltaBatcher(ext, req);
    void client
      .run(req, {
        signal: controller.signal,
        egress,
        onDelta: (text, reasoning) => deltas.add(text, reasoning),
        onRetry: (n) => void ext.emit("provider.retry_reported", { prompt_id: req.prompt_id, round: req.round, ...n }),
      })
      .then((result) => {
        deltas.flush();
        if (controller.signal.aborted) return;
        if (result.status === "finished") void ext.emit("provider.response_finished_reported", result.report);
        else void ext.emit("provider.response_failed_reported", result.report);
      })
      .catch((err: unknown) => {
        deltas.flush();
        void ext.emit("provider.response_failed_reported", { prompt_id: req.prompt_id, round: req.round, error_class: "protocol", diagnostic: `the provider failed (${(err as Error).name})` });
      })
      .finally(() => running.delete(key));
  });
  ext.ready();
}
