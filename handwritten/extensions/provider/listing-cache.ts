// The server's model listing kept across provider processes (SPEC-provider-chat-completions, "Model
// listing"): every `tau run` starts a provider, and asking `GET /models` each time made a 2-round job
// 3 requests. A listing is kept for MODEL_LISTING_TTL_MS in the provider instance's state folder
// (`<state root>/ext/<instance>/`, which an ephemeral session does not have: it keeps nothing), one
// file per base URL and key, holding the listing's body as the server sent it, so a cached one is checked by the very
// parser a fresh one is. Any file that is missing, too large, unreadable, malformed or stale is no
// listing: the caller asks the server again. Writing is best effort and never fails the listing.
import { createHash, randomBytes } from "node:crypto";
import { closeSync, fstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ModelListingResult } from "./declared-models.js";
import { MAX_MODELS_BODY_BYTES, parseModelListing } from "./models.js";

/** How long a kept listing is used: 10 minutes. */
export const MODEL_LISTING_TTL_MS = 10 * 60 * 1000;
/** The cache file's format; any other is no listing. */
const CACHE_VERSION = 1;
/** A kept file's most bytes: the listing's body cap, JSON-escaped at worst six-fold, plus the frame. */
const MAX_CACHE_FILE_BYTES = 6 * MAX_MODELS_BODY_BYTES + 1024;

/** The folder listings are kept in, in a provider instance's state folder. */
export function listingCacheDir(instanceState: string): string {
  return join(instanceState, "model-listings");
}

/** The file for one endpoint and key: named by a hash, so neither the URL nor the key is in a name. */
export function listingCacheFile(instanceState: string, baseUrl: string, apiKey: string | undefined): string {
  const name = createHash("sha256").update(`${baseUrl}\0${apiKey ?? ""}`).digest("hex").slice(0, 32);
  return join(listingCacheDir(instanceState), `${name}.json`);
}

/** The kept listing of `file` when it is whole and younger than the TTL at `now`; otherwise undefined. */
export function readCachedListing(file: string, baseUrl: string, now: number = Date.now()): Extract<ModelListingResult, { ok: true }> | undefined {
  let text: string;
  try {
    const fd = openSync(file, "r");
    try {
      const size = fstatSync(fd).size;
      if (size > MAX_CACHE_FILE_BYTES) return undefined; // bounded before anything is allocated
      const buf = Buffer.alloc(size);
      let at = 0;
      while (at < size) {
        const n = readSync(fd, buf, at, size - at, at);
        if (n === 0) break;
        at += n;
      }
      text = buf.subarray(0, at).toString("utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  let kept: unknown;
  try {
    kept = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof kept !== "object" || kept === null) return undefined;
  const k = kept as Record<string, unknown>;
  if (k.version !== CACHE_VERSION || k.base_url !== baseUrl || typeof k.body !== "string") return undefined;
  const at = k.fetched_at;
  // A time ahead of now (a clock set back) is as stale as an old one.
  if (typeof at !== "number" || !Number.isFinite(at) || at > now || now - at >= MODEL_LISTING_TTL_MS) return undefined;
  const parsed = parseModelListing(k.body);
  return parsed.ok ? parsed : undefined;
}

/** Keeps a listing's body (best effort: a state root that cannot be written keeps nothing). */
export function writeCachedListing(file: string, baseUrl: string, body: string, now: number = Date.now()): void {
  const dir = join(file, "..");
  const tmp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(tmp, JSON.stringify({ version: CACHE_VERSION, base_url: baseUrl, fetched_at: now, body }), { mode: 0o600 });
    renameSync(tmp, file); // whole or not at all: a concurrent reader never sees half a file
  } catch {
    rmSync(tmp, { force: true });
  }
}
