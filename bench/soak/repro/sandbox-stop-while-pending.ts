// Reproduction kept out of the suite (a race): found by the SIGKILL soak as socat bridges and
// `claude-http-*.sock` files left after an orderly stop of a resumed daemon (rounds 18, 35 and 48
// of `npm run soak -- --seed 31`; a replay of a round may not lose the race). An orderly stop (SIGTERM) of a daemon while its shell extension's sandbox
// is still `pending` leaves the sandbox runtime's host-side bridge (`socat UNIX-LISTEN:…/claude-http-
// *.sock`) running, and its socket file: the extension's stop resets the runtime only once it is set
// (handwritten/extensions/shell/sandbox/sandbox.ts: `stop()` uses `this.runtime`, which `setUp()`
// assigns only after `SandboxManager.initialize` resolved), so an initialization under way finishes
// after the reset that never happened.
//
//   npx tsx bench/soak/repro/sandbox-stop-while-pending.ts [TRIES]
//
// Exits 1 when any try left a process or a socket file (each try waits 3 s after the stop).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildAll } from "../../../build.js";
import { FakeOpenAI } from "../../../test/support/fake-openai.js";
import { waitFor } from "../../../test/support/wait.js";
import { killQuietly, processesOf, socketsUnder } from "../procs.js";
import { SoakSession } from "../session.js";

const tries = Number(process.argv[2] ?? 12);
await buildAll();
const fake = await FakeOpenAI.start();
const root = mkdtempSync(join(tmpdir(), "tau-soak-repro-"));
let leaked = 0;
for (let i = 1; i <= tries; i++) {
  const home = join(root, `t${i}`);
  const s = await SoakSession.create(home, { baseUrl: fake.baseUrl, handoff: false, sandbox: true });
  const pending = await s.delivered((d) => d.name === "sandbox.state_reported" && d.data.state === "pending", "the sandbox pending", 30_000).then(() => true, () => false);
  // timing-under-test: a drawn moment inside the sandbox's set-up, where the race is
  await new Promise((r) => setTimeout(r, (i * 37) % 150));
  const state = [...s.deliveries()].reverse().find((d) => d.name === "sandbox.state_reported")?.data.state;
  await s.stop();
  const left = () => processesOf(home, s.sids);
  await waitFor(() => left().length === 0, "the session's processes to end", 3_000).catch(() => undefined);
  const rest = left();
  const sockets = socketsUnder(join(home, "tmp"));
  if (rest.length > 0 || sockets.length > 0) leaked++;
  console.log(`try ${i}: sandbox ${pending ? "was pending" : "not seen pending"}, ${String(state)} at the stop: ${rest.length} process(es) left${rest.map((p) => ` [${p.cmd.slice(0, 90)}]`).join("")}, ${sockets.length} socket file(s) left`);
  for (const p of rest) killQuietly(p.pid);
  rmSync(home, { recursive: true, force: true });
}
await fake.close();
rmSync(root, { recursive: true, force: true });
console.log(`${leaked} of ${tries} orderly stops left the sandbox's bridge behind`);
process.exit(leaked > 0 ? 1 : 0);
