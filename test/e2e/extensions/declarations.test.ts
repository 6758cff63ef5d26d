// Extension declarations that shape an agent (SPEC-extension-declarations), through a real daemon,
// its real provider extension against a loopback OpenAI-compatible server, and test-dummy
// processes declaring, intercepting and dying: what the model of each agent is told.
import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor, type TestClient } from "../../support/daemon.js";
import { declarationSuite, dummy, rendered as tagged } from "./support.js";

const suite = declarationSuite();
const { session } = suite;
const systemOf = (c: TestClient, agent: string, marker: string) => suite.systemOf(c, agent, marker);

/** The driver declares `fragments` (a null text withdraws); resolves once the last one was delivered. */
async function declare(c: TestClient, fragments: Array<{ key: string; text: string | null }>, extra: Record<string, unknown> = {}): Promise<void> {
  const last = fragments.at(-1)!;
  const before = c.deliveriesOf("extension.prompt_fragment_declared", (x) => x.key === last.key).length;
  c.emit("extension.event", { category: "test", name: "fragments", payload: { fragments, ...extra } });
  await waitFor(() => c.deliveriesOf("extension.prompt_fragment_declared", (x) => x.key === last.key).length > before, `fragment ${last.key} to commit`, 30_000);
}

const rendered = (instance: string, key: string, text: string) => tagged("extension_fragment", instance, key, text);

describe("prompt fragments from extensions", () => {
  it("[declarations.fragments.rendered-frozen] fragments declared before ready and after render into agents initialized after; an agent keeps what it took", async () => {
    const { c } = await session([dummy("notes", { driver: true, fragments: [{ key: "style", text: "Answer in haiku." }] })]);
    const first = await c.createAgent("r-first");
    const s1 = await systemOf(c, first, "first-1");
    expect(s1).toContain(rendered("notes", "style", "Answer in haiku."));

    await declare(c, [
      { key: "style", text: "Answer in prose." },
      { key: "extra", text: "Mention the tests." },
    ]);
    const second = await c.createAgent("r-second");
    const s2 = await systemOf(c, second, "second-1");
    expect(s2).toContain(`${rendered("notes", "extra", "Mention the tests.")}\n${rendered("notes", "style", "Answer in prose.")}`);
    expect(s2).not.toContain("haiku");
    // The first agent was initialized before: its prompts keep what it took, word for word.
    expect(await systemOf(c, first, "first-2")).toBe(s1);

    await declare(c, [
      { key: "style", text: null },
      { key: "extra", text: null },
    ]);
    const third = await c.createAgent("r-third");
    expect(await systemOf(c, third, "third-1")).not.toContain("<extension_fragment");
    expect(await systemOf(c, second, "second-2")).toBe(s2);
  });

  it("[declarations.fragments.interceptor-drop] a declaration an interceptor drops never commits and changes no prompt", async () => {
    const { c } = await session([dummy("notes", { driver: true }), dummy("guard", { tools: [], drop_keys: ["secret"] })]);
    await declare(c, [
      { key: "secret", text: "Dropped on the way." },
      { key: "open", text: "Passed through." },
    ]);
    expect(c.deliveriesOf("extension.prompt_fragment_declared", (x) => x.key === "secret")).toEqual([]);
    const agent = await c.createAgent();
    const system = await systemOf(c, agent, "after-drop");
    expect(system).toContain(rendered("notes", "open", "Passed through."));
    expect(system).not.toContain("Dropped on the way.");
  });

  it("[declarations.fragments.stale-generation] a declaration that commits after its connection ended is an observation only", async () => {
    // The guard holds the declaration past the interception deadline while its declarer exits.
    const { c } = await session([dummy("notes", { driver: true }), dummy("guard", { tools: [], hold_keys: ["late"] })]);
    await declare(c, [{ key: "late", text: "From a process that is gone." }], { exit: true });
    await waitFor(() => c.deliveriesOf("extension.exited", (x) => x.instance === "notes").length === 1, "the declarer's exit", 30_000);
    // The respawned declarer is live again (its echo registered twice): its generation is a new one.
    await waitFor(() => c.deliveriesOf("tool.register", (x) => x.name === "echo").length >= 2, "the respawned declarer", 30_000);
    const agent = await c.createAgent();
    expect(await systemOf(c, agent, "after-exit")).not.toContain("From a process that is gone.");
  });

  it("[declarations.fragments.bounds] past 16 fragments or 32 KiB per instance a declaration is refused whole, with a notice; the others stay", async () => {
    const { c } = await session([dummy("notes", { driver: true })]);
    const keys = Array.from({ length: 17 }, (_, i) => `k${String(i).padStart(2, "0")}`);
    await declare(c, keys.map((key) => ({ key, text: `fragment ${key}` })));
    await c.delivered("harness.notice", (x) => x.text === "prompt fragment k16 from extension notes refused: the instance already has 16 fragments");
    const big = "x".repeat(16_000);
    await declare(c, [
      { key: "k00", text: big },
      { key: "k01", text: big },
      { key: "k02", text: big },
    ]);
    await c.delivered("harness.notice", (x) => x.text === "prompt fragment k02 from extension notes refused: the instance's fragments would exceed 32768 bytes");
    const agent = await c.createAgent();
    const system = await systemOf(c, agent, "bounded");
    expect(system).toContain(rendered("notes", "k01", big));
    expect(system).toContain(rendered("notes", "k02", "fragment k02"));
    expect(system).toContain(rendered("notes", "k15", "fragment k15"));
    expect(system).not.toContain('key="k16"');
  });

  it("[declarations.fragments.not-journaled] declarations and the projection stay out of every journal", async () => {
    const { c, home } = await session([dummy("notes", { driver: true, fragments: [{ key: "early", text: "Declared before ready." }] })]);
    await declare(c, [{ key: "late", text: "Declared while live." }]);
    const agent = await c.createAgent();
    expect(await systemOf(c, agent, "journaled?")).toContain("Declared while live.");
    const journals: string[] = [];
    const walk = (dir: string): void => {
      // Dirent types, not stat: the live daemon's lock temp files come and go under the walk.
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith(".cbor")) journals.push(path);
      }
    };
    walk(join(home, "state"));
    expect(journals.length).toBeGreaterThan(1); // the session's and the agent's
    for (const path of journals) {
      const bytes = readFileSync(path).toString("latin1");
      expect(bytes).not.toContain("prompt_fragment_declared");
      expect(bytes).not.toContain("Declared before ready.");
    }
  });
});
