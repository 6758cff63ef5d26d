// An owned daemon whose launcher never attaches must not linger: its front goes idle when no UI has
// been admitted within the bound (the daemon then stops as when its last UI leaves). Real socket,
// real harness, real UI hello.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DaemonFront } from "../../../handwritten/harness/daemon.js";
import { Harness } from "../../../handwritten/harness/index.js";
import { publishDaemonEndpoint, type DaemonEndpoint } from "../../../handwritten/transport/index.js";
import { TestClient } from "../../support/daemon.js";
import { waitFor } from "../../support/wait.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

/** A harness and its front on a real socket; `idle` counts the front's onIdle calls. */
async function front(exitWhenUisLeave: boolean): Promise<{ front: DaemonFront; endpoint: DaemonEndpoint; idle: () => number }> {
  const dir = mkdtempSync(join(tmpdir(), "tau-first-ui-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const harness = await Harness.open({ stateDir: join(dir, "state"), projectRoot: dir });
  cleanups.push(() => harness.shutdown("requested"));
  let idle = 0;
  const f = new DaemonFront(harness, { exitWhenUisLeave, onIdle: () => idle++ });
  const endpoint = await publishDaemonEndpoint({ runtimeDir: join(dir, "runtime"), version: "test", onConnection: (conn) => f.accept(conn) });
  cleanups.push(() => endpoint.shutdown());
  return { front: f, endpoint, idle: () => idle };
}

describe("an owned daemon's first UI", () => {
  it("[daemon.exit.no-first-ui] goes idle when no UI attaches within the bound, and not when one did", async () => {
    const lonely = await front(true);
    const attached = await front(true);
    const ui = await TestClient.ui(attached.endpoint.socketPath);
    cleanups.push(() => ui.close());
    const unowned = await front(false);
    attached.front.expectFirstUi(40);
    unowned.front.expectFirstUi(40);
    // The lonely front's bound starts last: Node runs timers of equal length in the order they were
    // set, so once it has gone idle the other two bounds have ended as well.
    lonely.front.expectFirstUi(40);
    await waitFor(() => lonely.idle() > 0, "the front no UI attached to to go idle");
    expect(lonely.idle()).toBe(1);
    expect(attached.idle()).toBe(0);
    expect(unowned.idle()).toBe(0);
  });
});
