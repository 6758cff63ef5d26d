// The bounds of the Gmail extension (SPEC-gmail, "Bounds"): one place, named.

/** Bytes (UTF-8) of one tool result, the `<tau_mail_content>` frame and any cut note included. */
export const GMAIL_MAX_RESULT_BYTES = 64 * 1024;
/** Bytes of one response body read (the API's JSON, a token answer); reading stops there. */
export const GMAIL_MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Longest wait for response headers, and longest silence while a body streams. */
export const GMAIL_HEADERS_TIMEOUT_MS = 15_000;
export const GMAIL_IDLE_TIMEOUT_MS = 15_000;
/** Longest one whole tool call takes (a token refresh and every API request included), approval wait excluded. */
export const GMAIL_CALL_TIMEOUT_MS = 60_000;
/** Longest a sign-in started by `:gmail login` waits for its code. */
export const GMAIL_LOGIN_WAIT_MS = 10 * 60_000;
/** Messages one search lists: the default and the most. */
export const GMAIL_DEFAULT_RESULTS = 10;
export const GMAIL_MAX_RESULTS = 25;
/** Characters of a search query, a header argument (to, cc, subject) and a draft's body. */
export const GMAIL_MAX_QUERY_CHARS = 1_000;
export const GMAIL_MAX_HEADER_CHARS = 2_000;
export const GMAIL_MAX_DRAFT_CHARS = 100_000;
/** Characters of one message's text shown (the frame bound applies after). */
export const GMAIL_MAX_TEXT_CHARS = 48_000;
/** Characters of a service's error text shown. */
export const GMAIL_MAX_ERROR_CHARS = 300;
/** The scopes asked for: read, compose (drafts) and send. */
export const GMAIL_SCOPES = ["https://www.googleapis.com/auth/gmail.readonly", "https://www.googleapis.com/auth/gmail.compose"] as const;
/** The secrets under `<config>/secrets/`: the refresh token this extension writes, the client secret the user may. */
export const TOKEN_SECRET = "gmail-token";
export const CLIENT_SECRET_SECRET = "gmail-client-secret";
export const DEFAULT_URLS = {
  auth: "https://accounts.google.com/o/oauth2/v2/auth",
  token: "https://oauth2.googleapis.com/token",
  api: "https://gmail.googleapis.com/",
} as const;
