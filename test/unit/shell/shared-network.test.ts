// The runtime's wrap made to run in the session's shared network namespace (SPEC-sandbox, "The
// network namespace"): the runtime's quoting read back exactly, and a wrap changed only when it has
// exactly the shape expected — anything else runs as the runtime built it.
import { describe, expect, it } from "vitest";
import { PassThrough } from "node:stream";
import { joinQuoted, relaysListening, sharedNetworkWrap, splitQuoted } from "../../../handwritten/extensions/shell/sandbox/shared-network.js";

const BRIDGE = "/tmp/claude-http-0123456789abcdef.sock";
const relay = (port: number) =>
  `{ socat TCP6-LISTEN:${port},ipv6only=0,fork,reuseaddr,backlog=4096 UNIX-CONNECT:${BRIDGE} || exec socat TCP4-LISTEN:${port},fork,reuseaddr,backlog=4096 UNIX-CONNECT:${BRIDGE}; } >/dev/null 2>&1 &`;
const helperLine = `SRT_ALLOW_NESTED_USERNS=0 /opt/apply-seccomp /usr/bin/bash -c ${joinQuoted([`export -n X; exec bash -c "$X"`])}`;
const script = [relay(3128), "_srt_http=$!", relay(1080), "_srt_socks=$!", "trap 'rc=$?; kill %1 %2 2>/dev/null; exit $rc' EXIT", "while false; do :; done", helperLine].join("\n");
const head = ["bwrap", "--new-session", "--die-with-parent", "--unshare-net", "--bind", BRIDGE, BRIDGE, "--setenv", "HTTP_PROXY", "http://srt.a:b@localhost:3128", "--setenv", "CLAUDE_CODE_HOST_HTTP_PROXY_PORT", "35341", "--setenv", "CLAUDE_CODE_HOST_SOCKS_PROXY_PORT", "35341", "--ro-bind", "/", "/", "--ro-bind", "/dev/null", "/p/it's here", "--unsetenv", "SRT_ALLOW_NESTED_USERNS"];
/** What the shared namespace keeps of the head: no namespace, no bind of the bridge, no host port variables. */
const kept = ["bwrap", "--new-session", "--die-with-parent", "--setenv", "HTTP_PROXY", "http://srt.a:b@localhost:3128", "--ro-bind", "/", "/", "--ro-bind", "/dev/null", "/p/it's here", "--unsetenv", "SRT_ALLOW_NESTED_USERNS"];
const wrap = (h = head, s = script) => joinQuoted([...h, "--", "/usr/bin/bash", "-c", joinQuoted(["/usr/bin/bash", "-c", s])]);

describe("the shared network namespace's wrap", () => {
  it("reads the runtime's quoting back word for word", () => {
    const words = ["a", "", "it's", "'\"'", "x y\nz", "$HOME", "=lead"];
    expect(splitQuoted(joinQuoted(words))).toEqual(words);
    expect(splitQuoted("a  b")).toBeUndefined();
    expect(splitQuoted("a\\ b")).toBeUndefined();
    expect(splitQuoted("'open")).toBeUndefined();
  });

  it("drops the namespace, the relays and what names the runtime's bridge, and has bubblewrap start the seccomp helper with its variable set last", () => {
    expect(sharedNetworkWrap(wrap(), BRIDGE)).toEqual([
      ...kept,
      "--setenv",
      "SRT_ALLOW_NESTED_USERNS",
      "0",
      "--",
      "/opt/apply-seccomp",
      "/usr/bin/bash",
      "-c",
      `export -n X; exec bash -c "$X"`,
    ]);
  });

  it("leaves any other shape to the runtime", () => {
    expect(sharedNetworkWrap(wrap(), "/tmp/other.sock")).toBeUndefined();
    expect(sharedNetworkWrap(wrap(head.filter((w) => w !== "--unshare-net")), BRIDGE)).toBeUndefined();
    expect(sharedNetworkWrap(wrap(head.slice(0, -2)), BRIDGE)).toBeUndefined();
    expect(sharedNetworkWrap(wrap(head, script.replace(helperLine, `eval ${joinQuoted(["echo hi"])}`)), BRIDGE)).toBeUndefined();
    expect(sharedNetworkWrap(wrap(head, script.replace(relay(1080), "")), BRIDGE)).toBeUndefined();
    expect(sharedNetworkWrap(`/bin/sh -c 'exec 3<"$1"' srt-args /proc/self/fd/3 bwrap --args 3 -- bash -c x`, BRIDGE)).toBeUndefined();
  });

  it("[sandbox.net.shared-namespace] takes the relays as listening once socat said so for both ports, in lines split anywhere", async () => {
    const out = new PassThrough();
    let ready: boolean | undefined;
    const waiting = relaysListening(out).then((r) => (ready = r));
    out.write("2026/12/04 16:58:19 socat[7] N listening on AF=10 [0000:0000:0000:0000:0000:0000:0000:0000]:31");
    out.write("28\n2026/12/04 16:58:19 socat[8] E socket(10, 1, 6): Address family not supported by protocol\n");
    await new Promise((r) => setImmediate(r));
    expect(ready).toBeUndefined(); // one port of two
    out.write("2026/12/04 16:58:19 socat[9] N listening on AF=2 0.0.0.0:1080\n");
    expect(await waiting).toBe(true);
    // What socat says afterwards is drained, never parsed or kept.
    expect(out.listenerCount("data")).toBe(0);
    expect(out.readableFlowing).toBe(true);
  });

  it("[sandbox.net.shared-namespace] the relays are not listening when the output ends first, or a port is only named in passing", async () => {
    const out = new PassThrough();
    const waiting = relaysListening(out);
    out.write("socat[7] N listening on AF=10 [::]:3128\nsocat[7] N opening connection to AF=1 \"/x:1080\"\n");
    out.end();
    out.resume();
    expect(await waiting).toBe(false);
  });
});
