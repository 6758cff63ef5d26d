// Set-up shared by the end-to-end tests: a loopback OpenAI-compatible server, fresh TAU_HOME
// workspaces removed after each test, and the process tree of a pid (to stop a daemon and its
// extensions whatever happens).
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { tauHome } from "./daemon.js";
import { FakeOpenAI } from "./fake-openai.js";

/**
 * One loopback server for the whole file (`perTest`: one per test, so a failing test cannot leave
 * scripted answers for the next), handed to `set` once started. Call at the top level of a test file.
 */
export function useFakeOpenAI(set: (server: FakeOpenAI) => void, o: { perTest?: boolean } = {}): void {
  let server: FakeOpenAI | undefined;
  const [before, after] = o.perTest ? [beforeEach, afterEach] : [beforeAll, afterAll];
  before(async () => {
    server = await FakeOpenAI.start();
    set(server);
  });
  after(async () => {
    await server?.close();
  });
}

/** Cleanups run after each test, newest first. Call at the top level of a test file. */
export function useCleanups(): Array<() => void> {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    while (cleanups.length) cleanups.pop()?.();
  });
  return cleanups;
}

export interface Workspace {
  readonly env: NodeJS.ProcessEnv;
  readonly home: string;
  readonly project: string;
}

/**
 * A fresh TAU_HOME (removed by `cleanups`) with `harnessYaml` as its harness.yaml — by default
 * the default extensions with the fake server's model — and an empty project folder.
 */
export function workspaceIn(cleanups: Array<() => void>, harnessYaml = "model: fake-model\n"): Workspace {
  const h = tauHome();
  cleanups.push(h.dispose);
  writeFileSync(join(h.home, "config", "harness.yaml"), harnessYaml);
  const project = join(h.home, "project");
  mkdirSync(project);
  return { env: h.env, home: h.home, project };
}

/** The pid and every descendant of it, from /proc. */
export function processTree(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of parentOf) if (ppid === out[i]) out.push(pid);
  return out;
}
