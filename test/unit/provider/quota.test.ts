// Reading the server's quota reports (SPEC-provider-websocket, "Quota pacing"): the windows of
// response headers, `codex.rate_limits` events and usage-limit errors, and what a request does.
import { describe, expect, it } from "vitest";
import { QUOTA_NEAR_PERCENT, QuotaPacer, windowFromError, windowsFromEvent, windowsFromHeaders } from "../../../handwritten/extensions/provider/quota.js";

const NOW = 1_800_000_000_000;

describe("quota reports", () => {
  it("[provider.ws.quota-reports] headers, events and usage-limit errors give windows; near is named once, exhausted waits within the bound, else is refused", () => {
    expect(
      windowsFromHeaders(
        {
          "x-codex-primary-used-percent": "95.5",
          "x-codex-primary-window-minutes": "300",
          "x-codex-primary-reset-at": String(NOW / 1000 + 60),
          "x-codex-secondary-used-percent": "10",
          "x-codex-secondary-reset-after-seconds": "120",
          "x-other-thing": "1",
          "x-codex-primary-used-percent-bogus": "1",
        },
        NOW,
      ),
    ).toEqual([
      { name: "codex.primary", usedPercent: 95.5, windowMinutes: 300, resetsAtMs: NOW + 60_000 },
      { name: "codex.secondary", usedPercent: 10, resetsAtMs: NOW + 120_000 },
    ]);
    expect(windowsFromHeaders({ "x-codex-primary-used-percent": "lots" }, NOW)).toEqual([]);
    expect(windowsFromEvent({ type: "codex.rate_limits", metered_limit_name: "codex-other", rate_limits: { primary: { used_percent: 100, window_minutes: 60, reset_at: NOW / 1000 + 30 }, secondary: null } }, NOW)).toEqual([
      { name: "codex_other.primary", usedPercent: 100, windowMinutes: 60, resetsAtMs: NOW + 30_000 },
    ]);
    expect(windowFromError({ type: "usage_limit_reached", resets_in_seconds: 90 }, NOW)).toEqual({ name: "codex.usage_limit", usedPercent: 100, resetsAtMs: NOW + 90_000 });

    const pacer = new QuotaPacer(60_000);
    const near = { name: "codex.primary", usedPercent: QUOTA_NEAR_PERCENT, resetsAtMs: NOW + 10_000 };
    expect(pacer.update([near])).toEqual([near]);
    expect(pacer.update([near])).toEqual([]); // named once
    expect(pacer.plan(NOW)).toEqual({ kind: "go" });
    const spent = { ...near, usedPercent: 100 };
    pacer.update([spent]);
    expect(pacer.plan(NOW)).toEqual({ kind: "wait", ms: 10_000, window: spent });
    expect(pacer.plan(NOW + 10_000)).toEqual({ kind: "go" }); // reset since: forgotten
    const later = { name: "codex.secondary", usedPercent: 100, resetsAtMs: NOW + 3600_000 };
    pacer.update([later]);
    expect(pacer.plan(NOW)).toEqual({ kind: "refuse", window: later });
    const unknown = new QuotaPacer(60_000);
    unknown.update([{ name: "codex.primary", usedPercent: 100 }]);
    expect(unknown.plan(NOW).kind).toBe("refuse");
  });
});
