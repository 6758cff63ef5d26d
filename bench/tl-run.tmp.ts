// temp: one sandboxed and one unsandboxed run with TAU_TIMELINE, printing milestones relative to spawn.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FakeOpenAI, textResponse, toolCallResponse } from "../test/support/fake-openai.js";
const fake = await FakeOpenAI.start();
const home = mkdtempSync(join(tmpdir(), "tl-"));
const project = join(home, "p"); mkdirSync(project);
mkdirSync(join(home, "config"), { recursive: true });
writeFileSync(join(home, "config", "harness.yaml"), "model: fake-model\n");
const rounds = Number(process.env.R ?? 3);
for (let i = 0; i < rounds; i++) for (const extra of [[], ["--no-sandbox"]]) {
  const tl = join(home, `tl-${i}-${extra.length}`);
  fake.enqueue(toolCallResponse([{ id: `c${i}`, name: "shell", arguments: '{"command":"echo hi"}' }]), textResponse("ok"));
  const t0 = performance.timeOrigin + performance.now();
  const c = spawn("/work/wt/lead/bin/tau.cjs", ["run", "--ephemeral", ...extra, "-p", "run echo hi"], { cwd: project, stdio: "ignore", env: { ...process.env, TAU_HOME: home, OPENAI_API_KEY: "k", OPENAI_MODEL: "fake-model", OPENAI_BASE_URL: fake.baseUrl, TAU_TIMELINE: tl } });
  await new Promise((r) => c.once("exit", r));
  const t1 = performance.timeOrigin + performance.now();
  if (i === rounds - 1) {
    console.log(`== ${extra.join(" ") || "sandboxed"} total ${(t1 - t0).toFixed(0)} ms`);
    const lines = readFileSync(tl, "utf8").trim().split("\n").map((l) => { const [t, pid, ...rest] = l.split(" "); return [Number(t) - t0, pid, rest.join(" ")] as const; }).sort((a, b) => a[0] - b[0]);
    for (const [t, pid, label] of lines) console.log(`${t.toFixed(1).padStart(7)} ${pid} ${label}`);
  } else console.log(`${extra.join(" ") || "sandboxed"} ${(t1 - t0).toFixed(0)}`);
}
await fake.close(); rmSync(home, { recursive: true, force: true });
