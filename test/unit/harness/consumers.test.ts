// The declared consumer table (handwritten/harness/consumers.ts) is what runs: the harness
// registers its post-commit consumers through ConsumerRegistry, by declared name, and refuses to
// start with a declaration nothing registered.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Bus, type Committed } from "../../../handwritten/bus/index.js";
import { CONSUMERS, ConsumerRegistry, Harness, type ConsumerName } from "../../../handwritten/harness/index.js";
import type { EventName } from "../../../generated/index.js";

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop() as string, { recursive: true, force: true });
});

/** Every declared (consumer, event), in table order. */
function declared(): Array<[ConsumerName, EventName]> {
  return Object.entries(CONSUMERS).flatMap(([consumer, events]) => Object.keys(events).map((e): [ConsumerName, EventName] => [consumer as ConsumerName, e as EventName]));
}

/** Registers one entry whatever its types (the table's entries are checked at run time here). */
function register(r: ConsumerRegistry, consumer: string, event: string, handler: (c: Committed) => void = () => undefined): void {
  (r.consume as (c: string, n: string, h: (c: Committed) => void) => void)(consumer, event, handler);
}

describe("post-commit consumers as declared", () => {
  it("[harness.consumers.registered-as-declared] a registry that leaves a declared entry unregistered refuses to complete, naming it", () => {
    const entries = declared();
    expect(entries.length).toBeGreaterThan(20);
    const complete = new ConsumerRegistry(new Bus());
    for (const [c, e] of entries) register(complete, c, e);
    expect(() => complete.assertComplete()).not.toThrow();

    const partial = new ConsumerRegistry(new Bus());
    for (const [c, e] of entries) if (!(c === "shell" && e === "shell.command_progress_reported")) register(partial, c, e);
    expect(partial.missing()).toEqual(["shell shell.command_progress_reported"]);
    expect(() => partial.assertComplete()).toThrow(/never registered .*: shell shell\.command_progress_reported$/);
  });

  it("[harness.consumers.registered-as-declared] a registration its consumer does not declare, or a second one, is refused", () => {
    const r = new ConsumerRegistry(new Bus());
    // @ts-expect-error the shell consumer declares no tool.request: the table is the registration's type
    expect(() => r.consume("shell", "tool.request", () => undefined)).toThrow("consumer shell registers for tool.request, which it does not declare");
    r.consume("shell", "shell.command_request", () => undefined);
    expect(() => r.consume("shell", "shell.command_request", () => undefined)).toThrow("consumer shell registers for shell.command_request twice");
  });

  it("[harness.consumers.registered-as-declared] a registered consumer runs on its event's commit, in registration order", async () => {
    const bus = new Bus();
    const r = new ConsumerRegistry(bus, { tools: { "agent.cancel_request": [] }, prompts: { "agent.cancel_request": [] } });
    const ran: string[] = [];
    register(r, "tools", "agent.cancel_request", () => ran.push("tools"));
    register(r, "prompts", "agent.cancel_request", () => ran.push("prompts"));
    r.assertComplete();
    const out = await bus.publish({ name: "agent.cancel_request", data: { agent_id: "a1" } }, { class: "ui_attached", generation: 1 });
    expect(out.status).toBe("committed");
    expect(ran).toEqual(["tools", "prompts"]);
  });

  it("[harness.consumers.registered-as-declared] the harness registers every declared consumer (it would not open otherwise)", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "tau-consumers-"));
    dirs.push(stateDir);
    const h = await Harness.open({ stateDir, projectRoot: "/p" });
    try {
      expect(h.sessionId).toMatch(/.+/);
    } finally {
      await h.shutdown("requested");
    }
  });
});
