// `tau ext web` (SPEC-web): `web_search` through Exa or Parallel, and `web_fetch` directly or through
// either, as one first-party extension. The harness starts it when harness.yaml has `web:`, with
// the adapters' keys (secrets `web-exa`, `web-parallel`) in its `configure` only.
import { Extension } from "../../sdk/index.js";
import { ADAPTER_SECRETS, DEFAULT_URLS, ExaAdapter, ParallelAdapter, type Adapter, type AdapterName } from "./adapters.js";
import { HostPolicy } from "./hosts.js";
import { WebHttp } from "./http.js";
import { fetchTool, searchTool } from "./tools.js";

export async function main(): Promise<void> {
  const ext = await Extension.connect();
  const settings = ext.settings("web");
  if (settings === undefined) return;
  const { web, sandbox } = settings;
  const http = new WebHttp();
  ext.onHarnessGone(() => http.close());
  const adapters = new Map<AdapterName, Adapter>();
  const adapter = (name: AdapterName): Adapter | undefined => {
    const existing = adapters.get(name);
    if (existing !== undefined) return existing;
    const raw = name === "exa" ? web.exa_url : web.parallel_url;
    let base: URL;
    try {
      base = new URL(raw ?? DEFAULT_URLS[name]);
      if (base.protocol !== "https:" && base.protocol !== "http:") throw new Error("not http(s)");
    } catch {
      ext.configError(`setting web.${name}_url: must be an http:// or https:// URL`);
      return undefined;
    }
    const key = ext.configuration.secrets[ADAPTER_SECRETS[name]];
    const made = name === "exa" ? new ExaAdapter(http, base, key) : new ParallelAdapter(http, base, key);
    adapters.set(name, made);
    return made;
  };
  const hosts = new HostPolicy({ ext, projectRoot: process.cwd(), ...(sandbox !== undefined ? { launch: sandbox } : {}) });
  if (web.search !== undefined) {
    const a = adapter(web.search);
    if (a === undefined) return;
    ext.registerTool(searchTool(a));
  }
  const fetchBy = web.fetch ?? "direct";
  const fetcher = fetchBy === "direct" ? undefined : adapter(fetchBy);
  if (fetchBy !== "direct" && fetcher === undefined) return;
  ext.registerTool(fetchTool({ adapter: fetcher, http, hosts }));
  ext.ready();
}
