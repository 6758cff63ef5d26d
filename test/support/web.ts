// Loopback stand-ins for the web extension's tests (SPEC-web): Exa's API (`POST /search`,
// `POST /contents`, key in `x-api-key`), Parallel's (`POST /v1beta/search`, `POST /v1beta/extract`,
// key in `x-api-key`, the `parallel-beta` header) and a plain page server, each on 127.0.0.1 with
// the answers a test scripts. Every request is logged before it is answered. Wire shapes from the
// services' public API references.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { connect, type AddressInfo, type Socket } from "node:net";

export interface LoggedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: unknown) => void | Promise<void>;

/** A certificate and key for a loopback HTTPS server (test/support/tls.ts). */
export type ServerTls = { readonly key: Buffer; readonly cert: Buffer };

/** A loopback HTTP (HTTPS with `tls`) server answering by path; unknown paths 404. */
export class LoopbackServer {
  readonly requests: LoggedRequest[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {
    server.on("connection", (s) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  static async start(routes: (path: string) => Handler | undefined, tls?: ServerTls): Promise<LoopbackServer> {
    let me: LoopbackServer | undefined;
    const handle = (req: IncomingMessage, res: ServerResponse): void => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        let body: unknown;
        try {
          body = raw === "" ? undefined : JSON.parse(raw);
        } catch {
          body = raw;
        }
        const path = (req.url ?? "/").split("?")[0] as string;
        me?.requests.push({ method: req.method ?? "", path, headers: req.headers, body });
        const handler = routes(path);
        if (handler === undefined) {
          res.writeHead(404, { "content-type": "text/plain" }).end("not found");
          return;
        }
        void Promise.resolve(handler(req, res, body)).catch(() => res.destroy());
      });
    };
    const server = tls !== undefined ? (createTlsServer(tls, handle) as unknown as Server) : createServer(handle);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    me = new LoopbackServer(server, `${tls !== undefined ? "https" : "http"}://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return me;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const json = (res: ServerResponse, status: number, value: unknown): void => {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
};

/** One result as a search service returns it. */
export interface StandInHit {
  readonly title: string;
  readonly url: string;
  readonly text: string;
  readonly published?: string;
}

/** What a stand-in answers: its results, or a status and body instead. */
export interface StandInScript {
  hits: StandInHit[];
  /** Pages by URL, for Exa's contents and Parallel's extract. */
  pages: Record<string, { title: string; text: string }>;
  /** Answer every request with this status (and `{error}` body) instead. */
  failWith?: { status: number; error: string };
}

const blankScript = (): StandInScript => ({ hits: [], pages: {} });

/** Exa's API as its reference describes it, answering `script`. */
export async function startExaStandIn(key: string, script: StandInScript = blankScript(), tls?: ServerTls): Promise<{ server: LoopbackServer; script: StandInScript }> {
  const authorized = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (script.failWith !== undefined) return void json(res, script.failWith.status, { requestId: "req-1", error: script.failWith.error }), false;
    if (req.headers["x-api-key"] !== key) return void json(res, 401, { requestId: "req-1", error: "Invalid API key" }), false;
    return true;
  };
  const server = await LoopbackServer.start((path) => {
    if (path === "/search")
      return (req, res, body) => {
        if (!authorized(req, res)) return;
        const b = body as { query?: unknown; numResults?: number };
        if (typeof b?.query !== "string") return json(res, 400, { error: "query is required" });
        const hits = script.hits.slice(0, b.numResults ?? 10);
        json(res, 200, { requestId: "req-1", resolvedSearchType: "neural", results: hits.map((h, i) => ({ id: h.url, title: h.title, url: h.url, publishedDate: h.published ?? null, author: null, score: 1 - i / 10, text: h.text })) });
      };
    if (path === "/contents")
      return (req, res, body) => {
        if (!authorized(req, res)) return;
        const urls = (body as { urls?: unknown })?.urls;
        if (!Array.isArray(urls)) return json(res, 400, { error: "urls is required" });
        const found = urls.filter((u: string) => script.pages[u] !== undefined);
        json(res, 200, {
          requestId: "req-2",
          results: found.map((u: string) => ({ id: u, url: u, title: script.pages[u]!.title, text: script.pages[u]!.text })),
          statuses: urls.map((u: string) => (script.pages[u] !== undefined ? { id: u, status: "success" } : { id: u, status: "error", error: { tag: "CRAWL_NOT_FOUND", httpStatusCode: 404 } })),
        });
      };
    return undefined;
  }, tls);
  return { server, script };
}

/** Parallel's API (search and extract, beta) as its reference describes it, answering `script`. */
export async function startParallelStandIn(key: string, script: StandInScript = blankScript()): Promise<{ server: LoopbackServer; script: StandInScript }> {
  const authorized = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (script.failWith !== undefined) return void json(res, script.failWith.status, { error: { message: script.failWith.error } }), false;
    if (req.headers["x-api-key"] !== key) return void json(res, 401, { error: { message: "Unauthorized", detail: "invalid api key" } }), false;
    if (req.headers["parallel-beta"] !== "search-extract-2025-10-10") return void json(res, 400, { error: { message: "the parallel-beta header is required" } }), false;
    return true;
  };
  const server = await LoopbackServer.start((path) => {
    if (path === "/v1beta/search")
      return (req, res, body) => {
        if (!authorized(req, res)) return;
        const b = body as { objective?: unknown; max_results?: number };
        if (typeof b?.objective !== "string") return json(res, 422, { error: { message: "objective or search_queries is required" } });
        const hits = script.hits.slice(0, b.max_results ?? 10);
        json(res, 200, { search_id: "search_1", results: hits.map((h) => ({ url: h.url, title: h.title, publish_date: h.published ?? null, excerpts: [h.text] })) });
      };
    if (path === "/v1beta/extract")
      return (req, res, body) => {
        if (!authorized(req, res)) return;
        const urls = (body as { urls?: unknown })?.urls;
        if (!Array.isArray(urls)) return json(res, 422, { error: { message: "urls is required" } });
        json(res, 200, {
          extract_id: "extract_1",
          results: urls.filter((u: string) => script.pages[u] !== undefined).map((u: string) => ({ url: u, title: script.pages[u]!.title, publish_date: null, excerpts: null, full_content: script.pages[u]!.text })),
          errors: urls.filter((u: string) => script.pages[u] === undefined).map((u: string) => ({ url: u, error_type: "fetch_error", http_status_code: 404, content: null })),
        });
      };
    return undefined;
  });
  return { server, script };
}

/**
 * A proxy on 127.0.0.1 that answers every CONNECT by tunnelling to `to(target)` (a loopback port),
 * whatever host it names, and records what each CONNECT named; anything but CONNECT is refused (502).
 */
export async function startTunnelProxy(to: (target: string) => number): Promise<{ url: string; connects: string[]; close(): Promise<void> }> {
  const connects: string[] = [];
  const sockets = new Set<Socket>();
  const proxy = createServer((_req, res) => res.writeHead(502).end());
  proxy.on("connect", (req: IncomingMessage, client: Socket) => {
    const target = req.url ?? "";
    connects.push(target);
    const upstream = connect(to(target), "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    connects,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
