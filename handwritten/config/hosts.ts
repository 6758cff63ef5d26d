// Host entries of a network allowlist (sandbox.yaml's `network.allowed_domains` and
// `denied_domains`, an MCP server's `allowed_hosts`): checked when the file is read, so an entry the
// proxy could never match — or one too broad to mean what it says — fails with its fix instead of
// being kept and silently ignored. The rule is the sandbox runtime's (its domain-pattern check),
// narrowed to host-name characters: `example.com`, `*.example.com` (at least two labels after the
// wildcard), `localhost`, an IPv4 address, a bracketed IPv6 address, each with an optional `:PORT`.
import { isIPv4, isIPv6 } from "node:net";

const LABEL = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?$/;

/** A `:PORT` suffix the runtime takes as one: 1–65535, no leading zero. */
function port(suffix: string): boolean {
  return /^[1-9][0-9]{0,4}$/.test(suffix) && Number(suffix) <= 65535;
}

function hostPattern(host: string): boolean {
  if (host === "localhost" || isIPv4(host)) return true;
  const wild = host.startsWith("*.");
  const labels = (wild ? host.slice(2) : host).split(".");
  return labels.length >= 2 && labels.every((l) => LABEL.test(l));
}

/**
 * Why `entry` cannot be an allowlist entry, or undefined. `deny` lists may also hold `*` (every
 * host), as the runtime's do.
 */
export function hostEntryProblem(entry: string, list: "allow" | "deny" = "allow"): string | undefined {
  if (list === "deny" && entry === "*") return undefined;
  let host = entry;
  if (entry.startsWith("[")) {
    const close = entry.indexOf("]");
    const rest = close === -1 ? "" : entry.slice(close + 1);
    if (close !== -1 && isIPv6(entry.slice(1, close)) && (rest === "" || (rest.startsWith(":") && port(rest.slice(1))))) return undefined;
    host = "";
  } else {
    const colon = entry.lastIndexOf(":");
    if (colon !== -1 && entry.indexOf(":") === colon && port(entry.slice(colon + 1))) host = entry.slice(0, colon);
  }
  if (host !== "" && hostPattern(host)) return undefined;
  return `${JSON.stringify(entry.slice(0, 80))} is not a host entry: give a host (example.com), a wildcard under a domain (*.example.com; not *.com or *), localhost, an IPv4 address or a bracketed IPv6 one ([::1]), each with an optional :PORT`;
}
