// `tau ext provider --login`: the ChatGPT sign-in that `tau provider login NAME` runs — the device
// code flow, or with `--browser` the redirect flow of browser-login.ts (SPEC-provider-websocket,
// "Sign-in") — in the provider extension so it goes out under the same
// egress policy as every provider call. The request is one JSON line on standard input; what the
// user must do is written to standard error; the answer is one JSON line on standard output. The
// tokens go to their 0600 file only: no output of this process carries one.
import { BROWSER_LOGIN_PORT, browserLogin } from "./browser-login.js";
import { createEgressPolicy } from "./egress.js";
import { openBrowser } from "./open-browser.js";
import { OAuthError, type OAuthTokens, completeDeviceLogin, requestDeviceCode, writeTokens } from "./oauth.js";

const MAX_REQUEST_BYTES = 16 * 1024;

interface LoginRequest {
  config_root: string;
  secret: string;
  auth_url: string;
  /** The sign-in: device code (the default) or a browser on this machine. */
  method: "device" | "browser";
  /** The browser sign-in's loopback port. */
  port: number;
  /** Whether the browser sign-in opens the address itself (else it is only shown). */
  open: boolean;
}

async function readRequest(stdin: NodeJS.ReadableStream): Promise<LoginRequest> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const b = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > MAX_REQUEST_BYTES) throw new Error(`the request is larger than ${MAX_REQUEST_BYTES} bytes`);
    parts.push(b);
  }
  const v = JSON.parse(Buffer.concat(parts).toString("utf8")) as Record<string, unknown>;
  const field = (k: keyof LoginRequest): string => {
    const x = v[k];
    if (typeof x !== "string") throw new Error(`${k} must be a string`);
    return x;
  };
  const method = v.method ?? "device";
  if (method !== "device" && method !== "browser") throw new Error("method must be device or browser");
  const port = v.port ?? BROWSER_LOGIN_PORT;
  if (typeof port !== "number" || !Number.isInteger(port) || port < 0 || port > 65535) throw new Error("port must be a port number");
  if (v.open !== undefined && typeof v.open !== "boolean") throw new Error("open must be true or false");
  return { config_root: field("config_root"), secret: field("secret"), auth_url: field("auth_url"), method, port, open: v.open !== false };
}

export async function signIn(stdin: NodeJS.ReadableStream = process.stdin, stdout: NodeJS.WritableStream = process.stdout, stderr: NodeJS.WritableStream = process.stderr): Promise<number> {
  let request: LoginRequest;
  try {
    request = await readRequest(stdin);
  } catch (err) {
    stdout.write(`${JSON.stringify({ ok: false, reason: `malformed login request: ${(err as Error).message}` })}\n`);
    return 2;
  }
  const egress = createEgressPolicy({});
  try {
    let tokens: OAuthTokens;
    if (request.method === "browser") {
      tokens = await browserLogin(egress, request.auth_url, {
        port: request.port,
        onUrl: (url) => {
          stderr.write(`To sign in, open this address in a browser on this machine (it waits 15 minutes at most):\n${url}\nWaiting…\n`);
          if (request.open) openBrowser(url);
        },
      });
    } else {
      const code = await requestDeviceCode(egress, request.auth_url);
      stderr.write(`To sign in, open ${code.verificationUrl} in a browser and enter the code ${code.userCode}\n(it expires in 15 minutes; never share it). Waiting…\n`);
      tokens = await completeDeviceLogin(egress, request.auth_url, code, (ms) => new Promise((r) => setTimeout(r, ms)));
    }
    const file = writeTokens(request.config_root, request.secret, tokens);
    stdout.write(`${JSON.stringify({ ok: true, file })}\n`);
    return 0;
  } catch (err) {
    // OAuthError messages are built from fixed words and statuses; anything else is named only by its kind.
    const reason = err instanceof OAuthError ? err.message : `the sign-in failed (${(err as NodeJS.ErrnoException).code ?? (err as Error).name})`;
    stdout.write(`${JSON.stringify({ ok: false, reason })}\n`);
    return 1;
  } finally {
    await egress.close();
  }
}
