// Socket files a shell extension killed with every other tau process left behind are removed at the
// next set-up (SPEC-sandbox, "Nothing outlives the session"): only this user's sockets whose named
// process is gone; a live owner's, this process's, and anything that is not a socket stay.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sweepDeadOwners } from "../../../handwritten/extensions/shell/sandbox/runtime-leftovers.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A socket file left at `path` by a process killed while it listened (nothing removed it). */
function leftSocket(path: string): void {
  const r = spawnSync(process.execPath, ["-e", `require("node:net").createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, "SIGKILL"))`]);
  expect(r.signal).toBe("SIGKILL");
  expect(existsSync(path)).toBe(true);
}

/** A pid no process has now: a child's, once it has exited and been reaped. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(r.stdout);
}

describe("sweepDeadOwners", () => {
  it("[sandbox.leak.stale-sockets-swept] removes the sockets of gone owners in the temp and runtime folders, and nothing else", () => {
    const temp = mkdtempSync(join(tmpdir(), "tau-sweep-"));
    dirs.push(temp);
    const runtime = join(temp, "runtime");
    mkdirSync(runtime);
    const dead = deadPid();
    const live = spawn("sleep", ["30"]);
    try {
      const gone = [join(temp, `srt-mux-${dead}-0.sock`), join(temp, `srt-mux-${dead}-1.sock`), join(runtime, `${dead}.sock`)];
      const kept = [join(temp, `srt-mux-${live.pid}-0.sock`), join(temp, `srt-mux-${process.pid}-0.sock`), join(runtime, `${live.pid}.sock`), join(temp, "claude-http-0123456789abcdef.sock")];
      for (const f of [...gone, ...kept]) leftSocket(f);
      // Not a socket: a file that only looks like one of ours.
      const plain = join(temp, `srt-mux-${dead}-2.sock`);
      writeFileSync(plain, "");
      expect(sweepDeadOwners({ temp, runtime }).sort()).toEqual([...gone].sort());
      for (const f of gone) expect(existsSync(f), f).toBe(false);
      for (const f of [...kept, plain]) expect(existsSync(f), f).toBe(true);
    } finally {
      live.kill("SIGKILL");
    }
  });
});
