// Host entries of a network allowlist (config/hosts.ts): what the sandbox's proxy can match, and
// nothing too broad to mean what it says.
import { describe, expect, it } from "vitest";
import { hostEntryProblem } from "../../../handwritten/config/hosts.js";

describe("host entries", () => {
  it("[sandbox.config.expansion-and-errors] takes hosts, wildcards under a domain, localhost, IP addresses and ports; refuses the rest with the fix", () => {
    for (const ok of ["example.com", "api.example.com:443", "*.example.com", "*.dev.example.com:8080", "localhost", "localhost:3000", "127.0.0.1", "10.0.0.1:22", "[::1]", "[2001:db8::1]:443", "my_host.internal"]) {
      expect(hostEntryProblem(ok), ok).toBeUndefined();
    }
    for (const bad of ["*", "*.com", "*.", "example", "bad host.example", "https://example.com", "example.com/path", "example.com:0", "example.com:65536", "example.com:080", "::1", "[::1]x", "[nothost]", "-lead.example", "trail-.example", "a..b", ".example.com", "example.com."]) {
      expect(hostEntryProblem(bad), bad).toMatch(/is not a host entry: give a host \(example\.com\)/);
    }
    expect(hostEntryProblem("*", "deny")).toBeUndefined();
    expect(hostEntryProblem("*")).toBeDefined();
  });
});
