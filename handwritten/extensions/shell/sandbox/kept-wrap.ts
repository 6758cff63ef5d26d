// The wrap kept between starts (SPEC-sandbox, "The wrap kept between starts"). Loading the runtime,
// starting its proxy and building a wrap cost a start about 50 ms of CPU beside its first model
// request; most commands never make a connection. A wrap the runtime built is kept in the state
// root with what it was built for, and a later start whose policy, disk and installation are the
// same in every respect the wrap depends on runs its commands with it in the shared network
// namespace, starting the runtime only when something needs it (a connection, a wrap to build).
//
// What the wrap depends on, all part of its identity or key: the runtime's and tau's code (the
// bundles' identities), the runtime's configuration, the disk as far as the wrap names it (the
// project scan, every path of the configuration and of the wrap, their ancestors: diskKey), the
// environment and programs the runtime reads (home, temp folders, PATH, the variables it looks
// at) and the machine's facts (enterProbeKey). What it names of the process that built it is left
// out: its bridge (dropped in the shared namespace) and its proxy's credential, which is this
// start's (tau gives the runtime its own, PROXY_TOKEN_HOOK) and is never written to disk.
import { builtin } from "../../../startup/builtin.js";
import { homedir, tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { randomHex } from "../../../startup/random.js";
import { enterProbeKey } from "./enter-probe.js";
import { keptProbeFile, programIdentity, readKept, writeKept } from "./kept-probes.js";
import { PROXY_TOKEN_HOOK } from "./runtime-hooks.js";

const sha256 = (text: string): string => builtin<typeof import("node:crypto")>("crypto").createHash("sha256").update(text).digest("hex");

/** This process's proxy credential: what the runtime takes (PROXY_TOKEN_HOOK) and a kept wrap is given. */
export const PROXY_TOKEN = randomHex(16);
(globalThis as Record<symbol, unknown>)[Symbol.for(PROXY_TOKEN_HOOK)] = () => PROXY_TOKEN;

/** Stands for the credential in a kept wrap (a credential is 32 hex digits, never this). */
const TOKEN_MARK = "TAU_KEPT_PROXY_TOKEN";
/** A kept wrap's file holds a few kilobytes; read bounded. */
const MAX_KEPT_BYTES = 256 * 1024;
const RECORD_VERSION = 1;

/** A wrap as kept: the runtime's words with this start's credential put in, its bridge, and what it was built for. */
export interface KeptWrap {
  readonly wrapped: string;
  readonly bridge: string;
  readonly key: string;
  readonly keyPaths: readonly string[];
}

/** Whether this code runs from the bundles (the runtime's own is beside it): only they have an identity to keep a wrap under. */
const OWN_BUNDLE = /\/dist\/fast\/[^/]+\.cjs$/.test(import.meta.url) ? fileURLToPath(import.meta.url) : undefined;

/**
 * What a kept wrap is kept under besides its key: the code that built and transforms it, the
 * runtime's configuration, the environment and programs it reads, the machine. Undefined where it
 * cannot be told (run from source, a bundle unreadable, the boot unknown): nothing is kept or used.
 */
export function keptIdentity(runtimeConfig: { readonly socatPath?: string }): string | undefined {
  if (OWN_BUNDLE === undefined) return undefined;
  const own = programIdentity(OWN_BUNDLE);
  const runtime = programIdentity(fileURLToPath(new URL("./sandbox-runtime.cjs", import.meta.url)));
  const machine = enterProbeKey();
  if (own === undefined || runtime === undefined || machine === undefined) return undefined;
  const env = Object.keys(process.env)
    .filter((k) => /^(PATH|CLAUDE_TMPDIR|CLAUDE_CODE_TMPDIR|JAVA_TOOL_OPTIONS|SRT_DEBUG|TMPDIR|TMP|TEMP|GIT_CONFIG.*)$/.test(k))
    .sort()
    .map((k) => `${k}=${process.env[k] ?? ""}`);
  // The socat the runtime's bridges run is set once the runtime loads; the shared namespace has no bridge.
  const { socatPath: _bridges, ...config } = runtimeConfig;
  const facts = [RECORD_VERSION, own, runtime, machine, homedir(), tmpdir(), process.cwd(), process.getuid?.(), process.getgid?.(), ...env, JSON.stringify(config)];
  return sha256(facts.join("\n"));
}

/** The file of the project's kept wrap, in the state root. */
export function keptWrapFile(stateRoot: string, projectRoot: string): string {
  return keptProbeFile(stateRoot, `wrap-${sha256(projectRoot).slice(0, 16)}.json`);
}

/**
 * The programs a shared-namespace wrap runs by path (the seccomp helper, the shell: the words after
 * bubblewrap's `--` that are absolute), each with its identity; bubblewrap and nsenter are the
 * machine's (enterProbeKey).
 */
export function wrapPrograms(shared: readonly string[]): string[] {
  return shared
    .slice(shared.indexOf("--") + 1)
    .filter((w) => w.startsWith("/"))
    .map((p) => `${p} ${programIdentity(p) ?? "-"}`);
}

const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((p) => typeof p === "string");

/** The wrap kept in `file` for `identity`, with this start's credential; undefined when none is, or another's. */
export function readKeptWrap(file: string, identity: string): (KeptWrap & { readonly programs: readonly string[] }) | undefined {
  const k = readKept(file, MAX_KEPT_BYTES);
  if (k === undefined || k.version !== RECORD_VERSION || k.identity !== identity) return undefined;
  const { wrapped, bridge, key, keyPaths, programs } = k;
  if (typeof wrapped !== "string" || typeof bridge !== "string" || typeof key !== "string" || !strings(keyPaths) || !strings(programs)) return undefined;
  return { wrapped: wrapped.split(TOKEN_MARK).join(PROXY_TOKEN), bridge, key, keyPaths, programs };
}

/**
 * Keeps `wrap` under `identity` with the identities of the programs it runs (`shared`, its words
 * for the shared namespace): only a wrap that carries this start's credential, written without it.
 */
export function keepWrap(file: string, identity: string, wrap: KeptWrap, shared: readonly string[]): void {
  if (!wrap.wrapped.includes(PROXY_TOKEN)) return;
  const record = { version: RECORD_VERSION, identity, wrapped: wrap.wrapped.split(PROXY_TOKEN).join(TOKEN_MARK), bridge: wrap.bridge, key: wrap.key, keyPaths: wrap.keyPaths, programs: wrapPrograms(shared) };
  // Written once per change: a start that took the kept wrap, or built the same, leaves the file alone.
  const kept = readKept(file, MAX_KEPT_BYTES);
  if (kept !== undefined && JSON.stringify(kept) === JSON.stringify(record)) return;
  writeKept(file, record);
}
