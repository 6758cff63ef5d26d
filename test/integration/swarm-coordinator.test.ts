// The coordinator's admission (SPEC-swarm, "Wire", "Coordinator") with real Iroh endpoints on
// loopback, relays disabled: the coordinator and worker links of tau's own, in this process.
import { afterEach, describe, expect, it } from "vitest";
import type { SwarmServeLine } from "../../generated/index.js";
import { SwarmLink } from "../../handwritten/extensions/swarm/link.js";
import { SwarmWorker } from "../../handwritten/extensions/swarm/worker.js";
import { SwarmCoordinator, bindEndpoint, endpointIdOfKey, generateKey, type IrohEndpoint } from "../../handwritten/swarm/index.js";
import { waitFor } from "../support/wait.js";

const open: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await Promise.resolve().then(c).catch(() => {});
});

async function coordinator(workers: Array<{ name: string; endpointId: string; credential: string }>) {
  const endpoint = await bindEndpoint({ key: await generateKey(), accept: true, bind: "127.0.0.1:0" });
  open.push(() => endpoint.close());
  const lines: SwarmServeLine[] = [];
  const co = new SwarmCoordinator(endpoint, workers, (l) => lines.push(l));
  void co.serve();
  const port = Number(endpoint.boundSockets().find((a) => a.startsWith("127.0.0.1:"))?.split(":")[1]);
  return { co, lines, id: endpoint.id().toString(), port };
}

async function link(o: { key: string; name: string; credential: string; to: { id: string; port: number } }) {
  const endpoint: IrohEndpoint = await bindEndpoint({ key: o.key, bind: "127.0.0.1:0" });
  const refusals: string[] = [];
  let l: SwarmLink | undefined;
  const worker = new SwarmWorker({ maxCommands: 8, maxBlockers: 8, maxUnacked: 8, maxTextBytes: 1024 }, { submit: () => {}, send: (u) => l?.deliver(u), diagnostic: () => {} });
  worker.agentId = "a";
  l = new SwarmLink(endpoint, worker, { worker: o.name, coordinator: o.to.id, addresses: [`127.0.0.1:${o.to.port}`], reconnectMs: 50, connectTimeoutMs: 5000, credential: o.credential }, { diagnostic: () => {}, refused: (r) => refusals.push(r) });
  void l.run();
  open.push(() => (l?.stop(), endpoint.close()));
  return { worker, refusals };
}

describe("the coordinator's admission", () => {
  it("[swarm.coordinator.unpinned-peer] an endpoint id it was not given is turned away before anything is read from it; a pinned endpoint under another worker's name is refused (unknown_worker)", async () => {
    const pinnedKey = await generateKey();
    const c = await coordinator([{ name: "w1", endpointId: await endpointIdOfKey(pinnedKey), credential: "cred-1" }]);
    const strangerKey = await generateKey();
    await link({ key: strangerKey, name: "w1", credential: "cred-1", to: c });
    await waitFor(() => c.lines.some((l) => l.kind === "refused_peer"), "the stranger turned away", 20_000);
    expect(c.lines.find((l) => l.kind === "refused_peer")).toMatchObject({ endpoint_id: await endpointIdOfKey(strangerKey), reason: "not an admitted worker's endpoint id" });
    const misnamed = await link({ key: pinnedKey, name: "w9", credential: "cred-1", to: c });
    await waitFor(() => misnamed.refusals.includes("unknown_worker"), "the misnamed worker refused", 20_000);
    expect(c.lines.some((l) => l.kind === "admitted")).toBe(false);
  });

  it("[swarm.coordinator.superseded] a second process of the same worker supersedes the first: it is admitted under its own incarnation, the first is refused (superseded) and stops dialling, and the first's open command is fenced", async () => {
    const key = await generateKey();
    const c = await coordinator([{ name: "w1", endpointId: await endpointIdOfKey(key), credential: "cred-1" }]);
    const first = await link({ key, name: "w1", credential: "cred-1", to: c });
    await waitFor(() => c.lines.some((l) => l.kind === "admitted"), "the first admission", 20_000);
    const commandId = await c.co.dispatch("w1", "work");
    await waitFor(() => c.lines.some((l) => l.update?.kind === "accepted"), "the command accepted", 20_000);
    const second = await link({ key, name: "w1", credential: "cred-1", to: c });
    await waitFor(() => c.lines.some((l) => l.kind === "admitted" && l.incarnation === second.worker.incarnation), "the second admission", 20_000);
    await waitFor(() => first.refusals.includes("superseded"), "the first superseded", 20_000);
    expect(c.lines.filter((l) => l.kind === "fenced")).toEqual([{ kind: "fenced", worker: "w1", command_id: commandId, incarnation: first.worker.incarnation }]);
    // The second holds the link: a command reaches it, and the first never comes back.
    await c.co.dispatch("w1", "more");
    await waitFor(() => c.lines.filter((l) => l.update?.kind === "accepted").length === 2, "the second's acceptance", 20_000);
    expect(c.lines.filter((l) => l.kind === "admitted").map((l) => l.incarnation)).toEqual([first.worker.incarnation, second.worker.incarnation]);
  });
});
