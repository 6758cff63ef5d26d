// The search and fetch services (SPEC-web, "Adapters"): Exa (`POST /search`, `POST /contents`) and
// Parallel (`POST /v1beta/search`, `POST /v1beta/extract`), each with its key from tau's secrets
// (sent as `x-api-key`, never in an argument, a log or an error). A refused key names the fix —
// where the key is kept — and never the key; what a service says about an error is cut short and
// has the key taken out should it echo it (sanitizeDiagnostic, as a provider's diagnostics).
import { join } from "node:path";
import { resolveRoots } from "../../config/index.js";
import { ToolFailure } from "../../sdk/index.js";
import { sanitizeDiagnostic } from "../provider/errors.js";
import { egressProblem, type WebHttp } from "./http.js";
import { WEB_MAX_ERROR_CHARS, WEB_MAX_TEXT_CHARS } from "./limits.js";

export type AdapterName = "exa" | "parallel";

/** One search result, every field as the service sent it (untrusted). */
export interface SearchHit {
  readonly title?: string;
  readonly url?: string;
  readonly published?: string;
  readonly text?: string;
}

/** One fetched page, as the service sent it (untrusted). */
export interface Page {
  readonly url: string;
  readonly title?: string;
  readonly text: string;
}

export interface Adapter {
  readonly name: AdapterName;
  search(query: string, count: number, signal: AbortSignal): Promise<SearchHit[]>;
  fetch(url: URL, signal: AbortSignal): Promise<Page>;
}

/** The secret each adapter's key is kept in. */
export const ADAPTER_SECRETS: Readonly<Record<AdapterName, string>> = { exa: "web-exa", parallel: "web-parallel" };
export const ADAPTER_TITLES: Readonly<Record<AdapterName, string>> = { exa: "Exa", parallel: "Parallel" };
export const DEFAULT_URLS: Readonly<Record<AdapterName, string>> = { exa: "https://api.exa.ai", parallel: "https://api.parallel.ai" };
/** Parallel's search and extract are behind this beta header. */
export const PARALLEL_BETA = "search-extract-2025-10-10";

/** Where the key goes, in words: the fix a refused or missing key names. */
export function keyFix(name: AdapterName): string {
  const secret = ADAPTER_SECRETS[name];
  const file = join(resolveRoots().config, "secrets", secret);
  return `put a valid ${ADAPTER_TITLES[name]} API key in ${file} (mode 0600), or in TAU_SECRET_${secret.toUpperCase().replace(/-/g, "_")} where tau starts, then start a new session`;
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** A service's own word on an error: its `error`/`message` text, made safe as a provider's diagnostic is (the key replaced). */
function serviceWords(raw: Buffer, key: string): string {
  let text = raw.toString("utf8", 0, Math.min(raw.length, 4096));
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    const e = j.error ?? j.message ?? j.detail;
    text = typeof e === "string" ? e : typeof e === "object" && e !== null ? String((e as Record<string, unknown>).message ?? JSON.stringify(e)) : text;
  } catch {
    // not JSON: as it came
  }
  const line = sanitizeDiagnostic(text, [key]);
  return line.length > WEB_MAX_ERROR_CHARS ? `${line.slice(0, WEB_MAX_ERROR_CHARS - 1)}…` : line;
}

abstract class KeyedAdapter implements Adapter {
  abstract readonly name: AdapterName;

  constructor(
    protected readonly http: WebHttp,
    protected readonly base: URL,
    private readonly key: string | undefined,
  ) {}

  abstract search(query: string, count: number, signal: AbortSignal): Promise<SearchHit[]>;
  abstract fetch(url: URL, signal: AbortSignal): Promise<Page>;

  protected headers(): Record<string, string> {
    return {};
  }

  /** POSTs `body` to `path` under the base URL; the parsed JSON of a 2xx answer, else a ToolFailure naming the fix. */
  protected async call(path: string, body: unknown, signal: AbortSignal): Promise<Record<string, unknown>> {
    const title = ADAPTER_TITLES[this.name];
    const key = this.key;
    if (key === undefined || key === "") throw new ToolFailure(`${title} has no API key: ${keyFix(this.name)}`);
    const url = new URL(path.replace(/^\//, ""), this.base.href.endsWith("/") ? this.base : new URL(`${this.base.href}/`));
    let res;
    try {
      res = await this.http.postJson(url, { "x-api-key": key, ...this.headers() }, body, signal);
    } catch (err) {
      throw new ToolFailure(`${title} could not be reached: ${sanitizeDiagnostic(egressProblem(err), [key])}`);
    }
    if (res.status === 401 || res.status === 403) throw new ToolFailure(`${title} refused the API key (HTTP ${res.status}): ${keyFix(this.name)}`);
    if (res.status === 429) throw new ToolFailure(`${title} is rate limiting this key (HTTP 429): try again later`);
    if (res.status < 200 || res.status >= 300) {
      const words = serviceWords(res.body.bytes, key);
      throw new ToolFailure(`${title} answered HTTP ${res.status}${words !== "" ? `: ${words}` : ""}`);
    }
    if (res.body.cut) throw new ToolFailure(`${title}'s answer was larger than tau reads (${res.body.bytes.length} bytes); ask for fewer results`);
    try {
      const parsed = JSON.parse(res.body.bytes.toString("utf8")) as unknown;
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // said below
    }
    throw new ToolFailure(`${title}'s answer is not the JSON object its API returns`);
  }
}

const listOf = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => typeof x === "object" && x !== null) : []);

/** Exa: `POST /search` with text contents; `POST /contents` for one URL's text. */
export class ExaAdapter extends KeyedAdapter {
  readonly name = "exa";

  async search(query: string, count: number, signal: AbortSignal): Promise<SearchHit[]> {
    const j = await this.call("/search", { query, type: "auto", numResults: count, contents: { text: { maxCharacters: Math.floor(WEB_MAX_TEXT_CHARS / count) } } }, signal);
    return listOf(j.results).map((r) => ({ title: str(r.title), url: str(r.url), published: str(r.publishedDate), text: str(r.text) ?? str(r.summary) }));
  }

  async fetch(url: URL, signal: AbortSignal): Promise<Page> {
    const j = await this.call("/contents", { urls: [url.href], text: { maxCharacters: WEB_MAX_TEXT_CHARS } }, signal);
    const status = listOf(j.statuses)[0];
    if (status !== undefined && status.status === "error") {
      const e = (status.error ?? {}) as Record<string, unknown>;
      throw new ToolFailure(`Exa could not fetch the page (${String(e.tag ?? "error").slice(0, 64)}${typeof e.httpStatusCode === "number" ? `, HTTP ${e.httpStatusCode}` : ""})`);
    }
    const r = listOf(j.results)[0];
    if (r === undefined) throw new ToolFailure("Exa returned no content for the page");
    return { url: str(r.url) ?? url.href, title: str(r.title), text: str(r.text) ?? "" };
  }
}

/** Parallel: `POST /v1beta/search` (objective and the query) and `POST /v1beta/extract` (full content). */
export class ParallelAdapter extends KeyedAdapter {
  readonly name = "parallel";

  protected override headers(): Record<string, string> {
    return { "parallel-beta": PARALLEL_BETA };
  }

  async search(query: string, count: number, signal: AbortSignal): Promise<SearchHit[]> {
    const j = await this.call("/v1beta/search", { objective: query, search_queries: [query], max_results: count, excerpts: { max_chars_per_result: Math.floor(WEB_MAX_TEXT_CHARS / count) } }, signal);
    return listOf(j.results).map((r) => ({
      title: str(r.title),
      url: str(r.url),
      published: str(r.publish_date),
      text: Array.isArray(r.excerpts) ? r.excerpts.filter((x): x is string => typeof x === "string").join("\n…\n") : undefined,
    }));
  }

  async fetch(url: URL, signal: AbortSignal): Promise<Page> {
    const j = await this.call("/v1beta/extract", { urls: [url.href], excerpts: false, full_content: { max_chars_per_result: WEB_MAX_TEXT_CHARS } }, signal);
    const r = listOf(j.results)[0];
    if (r === undefined) {
      const e = listOf(j.errors)[0];
      throw new ToolFailure(`Parallel could not fetch the page${e !== undefined ? ` (${String(e.error_type ?? "error").slice(0, 64)}${typeof e.http_status_code === "number" ? `, HTTP ${e.http_status_code}` : ""})` : ""}`);
    }
    return { url: str(r.url) ?? url.href, title: str(r.title), text: str(r.full_content) ?? (Array.isArray(r.excerpts) ? r.excerpts.filter((x): x is string => typeof x === "string").join("\n") : "") };
  }
}
