// The bounds of the web extension (SPEC-web, "Bounds"): one place, named.

/** Bytes (UTF-8) of one tool result, the `<tau_web_content>` frame and any cut note included. */
export const WEB_MAX_RESULT_BYTES = 64 * 1024;
/** Bytes of one response body read (a page, or an adapter's JSON); reading stops there. */
export const WEB_MAX_BODY_BYTES = 2 * 1024 * 1024;
/**
 * Characters of HTML (scripts, styles, SVG and comments taken out first) turned into markdown: the
 * conversion costs about 4.5 s per MiB here, and the result shows at most 64 KiB anyway.
 */
export const WEB_MAX_HTML_CHARS = 512 * 1024;
/** Redirects one `web_fetch` follows, each hop checked against the host policy first. */
export const WEB_MAX_REDIRECTS = 5;
/** Longest wait for response headers, and longest silence while a body streams. */
export const WEB_HEADERS_TIMEOUT_MS = 15_000;
export const WEB_IDLE_TIMEOUT_MS = 15_000;
/** Longest one whole call takes (every hop, the body and its conversion). */
export const WEB_CALL_TIMEOUT_MS = 60_000;
/** Characters of a `web_search` query and of a `web_fetch` URL. */
export const WEB_MAX_QUERY_CHARS = 1_000;
export const WEB_MAX_URL_CHARS = 2_048;
/** Results one search asks for: the default and the most. */
export const WEB_DEFAULT_RESULTS = 5;
export const WEB_MAX_RESULTS = 10;
/** Characters of page text an adapter is asked for per result or page. */
export const WEB_MAX_TEXT_CHARS = 20_000;
/** Characters of one error message shown to the model or the user. */
export const WEB_MAX_ERROR_CHARS = 512;
