// One network namespace for the session's commands (SPEC-sandbox, "The network namespace"). The
// runtime gives each command a network namespace of its own and, inside it, starts two socat
// relays (3128 and 1080, to its bridge socket) and waits for them to listen before the command
// runs: most of a sandboxed command's added time. tau keeps one such namespace instead, held by a
// bubblewrap of its own whose relays are started once — to a Unix socket of the extension's own,
// which passes each connection on to the runtime's proxy once that is up, so the namespace is
// made while the runtime still loads — and runs each command's bubblewrap inside it (nsenter),
// without a namespace or relays of its own; everything else of the runtime's wrap — the mounts,
// the seccomp helper, the environment with the proxy's address — stays as it built it. The
// seccomp helper then runs the command itself (`bash -c COMMAND`).
import { closeSync, openSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import type { Readable } from "node:stream";
import { builtin } from "../../../startup/builtin.js";
import { processStart, reapIfOrphaned, unrefPipe } from "../tools/index.js";
import { mark } from "../../../startup/timeline.js";
import { diesWithThisProcess } from "./parent-death.js";
import { enterProbeKey, forgetEnterable, keepEnterable, keptEnterable, looksLikeEnteringFailed } from "./enter-probe.js";

/** The relays' ports inside the namespace: those the runtime's wrap points HTTP_PROXY and ALL_PROXY at. */
const RELAY_PORTS = [3128, 1080] as const;
/** How long the holder's relays get to listen before the shared namespace is given up (commands then get one each). */
const READY_TIMEOUT_MS = 5_000;

type Child = import("node:child_process").ChildProcess;

/** `p`, or false once `ms` have passed. */
function withTimeout(p: Promise<boolean>, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void p.then((v) => {
      clearTimeout(timer);
      resolve(v);
    });
  });
}

/** A word of the runtime's quoting (`quote` in its shell-quote.js): a bare word, or single quotes with `'"'"'` for a quote. */
export function splitQuoted(text: string): string[] | undefined {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === " ") {
      if (!inWord) return undefined;
      words.push(word);
      word = "";
      inWord = false;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end === -1) return undefined;
      word += text.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      if (text.slice(i, i + 3) !== `"'"`) return undefined;
      word += "'";
      inWord = true;
      i += 2;
    } else if (/[A-Za-z0-9_./:=@+,-]/.test(c)) {
      word += c;
      inWord = true;
    } else return undefined;
  }
  if (inWord) words.push(word);
  return words;
}

/** Quotes words as the runtime does. */
export function joinQuoted(words: readonly string[]): string {
  return words.map((w) => (w !== "" && /^[A-Za-z0-9_./:@+,-][A-Za-z0-9_./:=@+,-]*$/.test(w) ? w : `'${w.replace(/'/g, `'"'"'`)}'`)).join(" ");
}

/**
 * The runtime's wrap made to run in the shared namespace: bubblewrap's arguments without
 * `--unshare-net`, and as its command the seccomp helper running the command — the last line of
 * the runtime's script, after its relays and its wait for them. bubblewrap starts the helper
 * itself, with the helper's variable set last (`--setenv` after the runtime's `--unsetenv`, as the
 * line's assignment did; no shell runs in between to change it). Undefined (the wrap then runs as
 * the runtime built it) unless the wrap is exactly of the shape this knows: bubblewrap's words
 * inline, one `--unshare-net`, the helper's variable cleared, a script whose relays go to `bridge`
 * and whose last line is `SRT_ALLOW_NESTED_USERNS=0|1 HELPER SHELL -c COMMAND`.
 */
export function sharedNetworkWrap(wrapped: string, bridge: string): string[] | undefined {
  const words = splitQuoted(wrapped);
  if (words === undefined || !/(^|\/)bwrap$/.test(words[0] ?? "")) return undefined;
  const end = words.indexOf("--");
  if (end === -1 || words.length !== end + 4 || words[end + 2] !== "-c") return undefined;
  const head = words.slice(0, end);
  if (head.filter((w) => w === "--unshare-net").length !== 1 || head.includes("--args") || head[head.length - 2] !== "--unsetenv" || head[head.length - 1] !== HELPER_VARIABLE) return undefined;
  const inner = splitQuoted(words[end + 3] as string);
  if (inner === undefined || inner.length !== 3 || inner[0] !== words[end + 1] || inner[1] !== "-c") return undefined;
  const lines = (inner[2] as string).split("\n");
  const relays = lines.filter((l) => l.includes("-LISTEN:"));
  if (relays.length !== 2 || !relays.every((l) => l.includes(`UNIX-CONNECT:${bridge} `))) return undefined;
  const last = splitQuoted(lines[lines.length - 1] as string);
  if (last === undefined || last.length !== 5 || !/^SRT_ALLOW_NESTED_USERNS=[01]$/.test(last[0] as string) || !(last[1] as string).startsWith("/") || last[3] !== "-c") return undefined;
  const value = (last[0] as string).slice(HELPER_VARIABLE.length + 1);
  return [...withoutBridge(head.filter((w) => w !== "--unshare-net"), bridge), "--setenv", HELPER_VARIABLE, value, "--", ...last.slice(1)];
}

/** The variables the runtime sets to its proxy's host port, "for transparency": the shared namespace's relays go elsewhere. */
const HOST_PORT_VARIABLES = new Set(["CLAUDE_CODE_HOST_HTTP_PROXY_PORT", "CLAUDE_CODE_HOST_SOCKS_PROXY_PORT"]);

/**
 * bubblewrap's words without what serves only the runtime's own relays: the bind of its bridge's
 * socket (the shared namespace's relays reach this process instead) and the host port variables.
 * What is left names nothing of this start's runtime but its proxy's credential (kept-wrap.ts).
 */
function withoutBridge(words: readonly string[], bridge: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (words[i] === "--bind" && words[i + 1] === bridge && words[i + 2] === bridge) i += 2;
    else if (words[i] === "--setenv" && HOST_PORT_VARIABLES.has(words[i + 1] ?? "") && /^\d+$/.test(words[i + 2] ?? "")) i += 2;
    else out.push(words[i] as string);
  }
  return out;
}

/** The variable the runtime's seccomp helper reads (whether nested user namespaces are allowed). */
const HELPER_VARIABLE = "SRT_ALLOW_NESTED_USERNS";

/** The most a line of the relays' notices is kept while it is incomplete (a notice is about 100 bytes). */
const MAX_NOTICE_LINE = 4_096;

/**
 * Resolves true once socat has said, on `out` (its `-d -d` notices), that it listens on every relay
 * port; false when `out` ends first. Reading the namespace's /proc/PID/net/tcp6 instead costs the
 * kernel a walk of the whole TCP hash per look (about 2 ms here, four looks per poll). Everything
 * socat says later (a few lines per connection a command makes) is read and dropped.
 */
export function relaysListening(out: Readable): Promise<boolean> {
  const waiting = new Set<number>(RELAY_PORTS);
  let partial = "";
  return new Promise<boolean>((resolve) => {
    const onData = (d: Buffer): void => {
      const lines = (partial + d.toString("latin1")).split("\n");
      partial = (lines.pop() ?? "").slice(-MAX_NOTICE_LINE);
      for (const line of lines) {
        const m = / N listening on AF=\d+ .*:(\d+)$/.exec(line);
        if (m !== null) waiting.delete(Number(m[1]));
      }
      if (waiting.size > 0) return;
      out.off("data", onData);
      out.resume(); // drained from here on, never parsed
      resolve(true);
    };
    out.on("data", onData);
    out.on("error", () => {});
    out.once("close", () => resolve(false));
  });
}

export class SharedNetwork {
  private holder: Child | undefined;
  private nsPid: number | undefined;
  private nsStart: string | undefined;
  /** Descriptors of the holder's user and network namespaces, kept open while it is up. */
  private fds: [number, number] | undefined;
  private release: Array<() => void> = [];
  private starting: Promise<boolean> | undefined;
  private server: Server | undefined;
  private socketPath: string | undefined;
  private readonly waiting: Socket[] = [];
  private proxyPort: number | undefined;
  /** Called once, when a connection waits for a proxy that is not up (the runtime is then started). */
  private onWaiting: (() => void) | undefined;
  /** Where a "yes" to the entering question is kept between starts (enter-probe.ts), and for what. */
  private probe: { file: string; key: string | undefined; kept: boolean } | undefined;

  /** Keeps the answer to whether commands can enter the namespace in `file` (the state root's). */
  keepProbeIn(file: string): void {
    this.probe = { file, key: undefined, kept: false };
  }

  /**
   * Starts the holder (once), its relays to a Unix socket at `socketPath` that this process serves
   * (a private folder's); false when it cannot be had (no nsenter, bubblewrap refused, relays not
   * listening). Connections wait until `proxyUp` names the runtime's proxy.
   */
  start(socketPath: string, socat = "socat"): Promise<boolean> {
    this.starting ??= this.startOnce(socketPath, socat)
      .catch(() => false)
      .then((up) => {
        if (!up) this.stop();
        return up;
      });
    return this.starting;
  }

  private async startOnce(bridge: string, socat: string): Promise<boolean> {
    const cp = builtin<typeof import("node:child_process")>("child_process");
    if (Buffer.byteLength(bridge) > 100) return false;
    const relay = (port: number): string =>
      `{ ${joinQuoted([socat])} -d -d TCP6-LISTEN:${port},ipv6only=0,fork,reuseaddr,backlog=4096 ${joinQuoted([`UNIX-CONNECT:${bridge}`])} 2>&1 >/dev/null || exec ${joinQuoted([socat])} -d -d TCP4-LISTEN:${port},fork,reuseaddr,backlog=4096 ${joinQuoted([`UNIX-CONNECT:${bridge}`])} 2>&1 >/dev/null; } &`;
    // Each relay's notices (stderr) go to the script's output, a pipe to this process: the first,
    // "listening on", says it is ready (relaysListening).
    // sh, not bash: its input is a socket (a Node pipe), and bash, taking that for a remote shell's,
    // reads ~/.bashrc where SHLVL is unset (this environment): 100 ms here, and the user's code.
    // The script ends the relays and itself when its input ends: the pipe from this process, whose
    // only writing end this process holds, so it happens however this process ends. The namespace's
    // init (bubblewrap's inner process) exits only once every process in it has, and its
    // --die-with-parent was seen not to fire once the outer bubblewrap was killed with this process.
    const script = [...RELAY_PORTS.map(relay), "read -r _; kill 0"].join("\n");
    const bwrap = ["bwrap", "--new-session", "--die-with-parent", "--unshare-user", "--unshare-net", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--info-fd", "3", "--", "sh", "-c", script];
    // bubblewrap's --die-with-parent ends what runs inside it, not bubblewrap itself: with the
    // kernel's parent-death signal set before it starts (setpriv, then exec), the holder ends with
    // this process even when the reaper is killed with it (a `kill -9` of every tau process).
    const [file, ...args] = diesWithThisProcess(bwrap);
    const holder = cp.spawn(file as string, args, {
      // A group of its own, listed with the reaper: it goes with this process whatever ends it.
      detached: true,
      stdio: ["pipe", "pipe", "ignore", "pipe"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    this.holder = holder;
    holder.on("error", () => {});
    if (holder.pid !== undefined) this.release.push(reapIfOrphaned({ kind: "group", pid: holder.pid }));
    holder.once("exit", () => this.lost(holder));
    holder.unref();
    // Never written: held open, without keeping this process alive, until this process ends.
    holder.stdin?.on("error", () => {});
    unrefPipe(holder.stdin);
    const info = holder.stdio[3] as Readable | null;
    unrefPipe(info);
    const notices = holder.stdout as Readable;
    unrefPipe(notices);
    const relays = withTimeout(relaysListening(notices), READY_TIMEOUT_MS);
    const child = new Promise<number | undefined>((resolve) => {
      let text = "";
      const timer = setTimeout(() => resolve(undefined), READY_TIMEOUT_MS);
      info?.on("data", (d: Buffer) => {
        text += d.toString("utf8");
        const m = /"child-pid":\s*(\d+)/.exec(text);
        if (m !== null) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      info?.on("error", () => {});
      holder.once("exit", () => {
        clearTimeout(timer);
        resolve(undefined);
      });
    });
    // Served once the holder is on its way (its relays connect only when a command connects, after set-up).
    if (!(await this.serve(bridge))) return false;
    const childPid = await child;
    if (childPid === undefined || this.holder !== holder) return false;
    // The namespaces are the holder child's while its start time is the one read before and after opening them.
    const start = processStart(childPid);
    const user = openSync(`/proc/${childPid}/ns/user`, "r");
    const net = openSync(`/proc/${childPid}/ns/net`, "r");
    this.fds = [user, net];
    if (start === "-" || processStart(childPid) !== start || this.holder !== holder) return false;
    // A bubblewrap started inside it, as commands' will be, while its relays come up: where this
    // machine refuses that (nsenter missing, a security module), commands get a namespace each, as
    // the runtime wraps them.
    mark("sandbox namespace held");
    const entered = this.enteredOrKept(user, net);
    if (!(await relays) || this.holder !== holder) return false;
    this.nsPid = childPid;
    this.nsStart = start;
    mark("sandbox namespace relays listening");
    const ok = await entered;
    mark("sandbox namespace entered");
    return ok && this.holder === holder;
  }

  /** Whether commands can enter the namespace: the kept answer for this machine's facts, else asked (and a "yes" kept). */
  private enteredOrKept(user: number, net: number): Promise<boolean> {
    const probe = this.probe;
    if (probe === undefined) return this.enterable(user, net);
    probe.key = enterProbeKey();
    probe.kept = probe.key !== undefined && keptEnterable(probe.file, probe.key);
    if (probe.kept) return Promise.resolve(true);
    return this.enterable(user, net).then((ok) => {
      if (ok && probe.key !== undefined) keepEnterable(probe.file, probe.key);
      return ok;
    });
  }

  /**
   * A command run inside the namespace failed with `output`: when it began the way a failure to
   * enter does and entering was taken from the kept answer, that answer is forgotten and the
   * question asked now; a "no" ends the namespace (later commands get one each).
   */
  suspect(output: string): void {
    const probe = this.probe;
    const fds = this.fds;
    if (probe === undefined || !probe.kept || fds === undefined || !looksLikeEnteringFailed(output)) return;
    probe.kept = false;
    forgetEnterable(probe.file);
    const holder = this.holder;
    void this.enterable(...fds).then((ok) => {
      if (this.holder !== holder) return;
      if (ok && probe.key !== undefined) keepEnterable(probe.file, probe.key);
      else if (!ok) this.stop();
    });
  }

  /** Whether a bubblewrap starts inside the namespaces open at `user` and `net` (this process's descriptors). */
  private enterable(user: number, net: number): Promise<boolean> {
    const cp = builtin<typeof import("node:child_process")>("child_process");
    const probe = cp.spawn("nsenter", ["--preserve-credentials", `--user=/proc/${process.pid}/fd/${user}`, `--net=/proc/${process.pid}/fd/${net}`, "--", "bwrap", "--new-session", "--die-with-parent", "--unshare-user", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"], {
      stdio: "ignore",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    return new Promise<boolean>((resolve) => {
      probe.once("error", () => resolve(false));
      probe.once("exit", (code) => resolve(code === 0));
    });
  }

  /** Listens on `path` (removed first: it is this process's own name), listed with the reaper. */
  private async serve(path: string): Promise<boolean> {
    rmSync(path, { force: true });
    const server = createServer((client) => this.accept(client));
    server.unref();
    const listening = await new Promise<boolean>((resolve) => {
      server.once("error", () => resolve(false));
      server.listen(path, () => resolve(true));
    });
    if (!listening) return false;
    this.server = server;
    this.socketPath = path;
    this.release.push(reapIfOrphaned({ kind: "socket", path }));
    return true;
  }

  /** A connection from a relay: to the runtime's proxy, now or once it is up. */
  private accept(client: Socket): void {
    client.on("error", () => client.destroy());
    if (this.proxyPort === undefined) {
      client.pause();
      this.waiting.push(client);
      const wake = this.onWaiting;
      this.onWaiting = undefined;
      wake?.();
      client.once("close", () => this.waiting.splice(this.waiting.indexOf(client) >>> 0, 1));
      return;
    }
    const upstream = connect(this.proxyPort, "127.0.0.1");
    upstream.setKeepAlive(true, 10_000);
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  }

  /** The runtime's proxy listens on `port` (its loopback): waiting connections go on to it. */
  proxyUp(port: number): void {
    this.proxyPort = port;
    for (const client of this.waiting.splice(0)) this.accept(client);
  }

  /**
   * Set up without the runtime (a kept wrap, kept-wrap.ts): the first connection that waits for the
   * proxy calls `start`, which brings the runtime up (then `proxyUp`) or gives up (`stop`).
   */
  proxyOnDemand(start: () => void): void {
    if (this.proxyPort !== undefined) return;
    if (this.waiting.length > 0) start();
    else this.onWaiting = start;
  }

  /**
   * The descriptors of the holder's user and network namespaces, while the holder is up (its
   * relays listening; their connections wait for the runtime's proxy when it is not up yet).
   */
  descriptors(): [number, number] | undefined {
    if (this.fds === undefined || this.nsPid === undefined || processStart(this.nsPid) !== this.nsStart) return undefined;
    return this.fds;
  }

  private lost(holder: Child): void {
    if (this.holder === holder) this.stop();
  }

  /** Ends the holder and forgets the namespace: later commands get one each, as the runtime wraps them. */
  stop(): void {
    const holder = this.holder;
    this.holder = undefined;
    this.nsPid = undefined;
    this.onWaiting = undefined;
    if (this.fds !== undefined) for (const fd of this.fds) closeSync(fd);
    this.fds = undefined;
    for (const client of this.waiting.splice(0)) client.destroy();
    this.server?.close();
    this.server = undefined;
    if (this.socketPath !== undefined) rmSync(this.socketPath, { force: true });
    this.socketPath = undefined;
    if (holder?.pid !== undefined && holder.exitCode === null && holder.signalCode === null) {
      try {
        process.kill(-holder.pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    for (const r of this.release.splice(0)) r();
  }
}

/**
 * The command line that runs `words` (a shared-network wrap) inside the namespaces this process
 * holds open (`descriptors`), named through /proc/<this pid>/fd: the command's processes never hold
 * a descriptor of them. Should this process have closed them meanwhile, nsenter fails (the command
 * is not run).
 */
export function enterSharedNetwork(words: readonly string[], fds: readonly [number, number]): string {
  const [user, net] = fds;
  return `exec nsenter --preserve-credentials --user=/proc/${process.pid}/fd/${user} --net=/proc/${process.pid}/fd/${net} -- ${joinQuoted(words)}`;
}
