// The agent switcher of the real `tau` interactive UI in a pseudo-terminal (SPEC-agent-navigation):
// a parent starts a child through the loopback model; `:agents` shows them as a tree with state and
// escaped work status; `:agent NAME` and the cycle key switch the shown transcript, the prompts'
// target and the status line; a stub `fzf` first on PATH picks an agent, and its cancel changes nothing.
import { afterAll, describe, expect, it } from "vitest";
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useFakeOpenAI, workspaceIn, type Workspace } from "../../support/e2e.js";
import { roundTrip, spawnTau, type PtyTau } from "../../support/pty.js";
import { waitForOwnedDaemons } from "../../support/daemon.js";
import { findOnPath } from "../../../handwritten/cli/tui/agent-switcher.js";
import { FakeOpenAI, textResponse, toolCallResponse, type ReceivedRequest } from "../../support/fake-openai.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));

type Msg = { role: string; content?: unknown };
const messagesOf = (r: ReceivedRequest): Msg[] => (r.body as { messages: Msg[] }).messages;
const users = (r: ReceivedRequest): string[] => messagesOf(r).filter((m) => m.role === "user").map((m) => String(m.content ?? ""));
const isChild = (r: ReceivedRequest): boolean => (users(r)[0] ?? "").startsWith("<agent_message");
const rounds = (r: ReceivedRequest): number => messagesOf(r).filter((m) => m.role === "assistant").length;

/** The stub fzf: records its arguments and input, then answers as its `mode` file says. */
const FZF_STUB = `#!/bin/sh
dir=$(dirname "$0")
printf '%s\\n' "$@" > "$dir/args.txt"
cat > "$dir/input.txt"
mode=$(cat "$dir/mode")
if [ "$mode" = cancel ]; then exit 130; fi
grep "$mode" "$dir/input.txt" | head -n 1
`;

let t: PtyTau;
let w: Workspace;
let stubDir: string;
let parent: string;
let child: string;
const has = (text: string) => (screen: string[]) => screen.some((l) => l.includes(text));
const status = () => t.screen().filter((l) => l.startsWith("tau · ")).at(-1) ?? "";

/** The session lives through the three tests: undone after the last. */
const shared: Array<() => void> = [];
afterAll(() => {
  while (shared.length > 0) shared.pop()?.();
});

function start(): Workspace {
  const w = workspaceIn(shared);
  stubDir = join(w.home, "fzf-bin");
  mkdirSync(stubDir, { recursive: true });
  writeFileSync(join(stubDir, "fzf"), FZF_STUB);
  chmodSync(join(stubDir, "fzf"), 0o755);
  writeFileSync(join(stubDir, "mode"), "cancel");
  const env = { ...process.env, ...w.env, PATH: `${stubDir}:${process.env.PATH ?? ""}`, TERM: "xterm-256color", OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "sk-test", OPENAI_MODEL: "fake-model" };
  t = spawnTau([], { env, cwd: w.project, cols: 160, rows: 40 });
  shared.push(() => t.kill());
  return { ...w, env };
}

afterAll(() => fake?.respondWith(undefined));

describe("the agent switcher in a pseudo-terminal", () => {
  it("[agent-navigation.tui.switch] :agents shows the parent and the child it started as a tree; :agent NAME and the cycle key switch the transcript, the prompts and the status line", async () => {
    w = start();
    fake.respondWith((r) => {
      if (isChild(r)) {
        if (rounds(r) === 0) return toolCallResponse([{ id: "call_ws", name: "work_status", arguments: JSON.stringify({ phase: "working", title: "checking <the> list" }) }]);
        if (users(r).some((u) => u.includes("and now, child?"))) return textResponse("the child heard you");
        return textResponse("child report ready");
      }
      if (rounds(r) === 0) return toolCallResponse([{ id: "call_start", name: "agent_start", arguments: JSON.stringify({ task: "make a report", display_name: "helper" }) }]);
      return textResponse("parent delegated");
    });
    await t.waitFor(has(" · ready"), "the session to be ready", 60_000);
    t.type("please delegate\r");
    await t.waitFor(has("parent delegated"), "the parent's answer", 60_000);
    await t.waitFor(() => fake.chatRequests.some((r) => isChild(r) && rounds(r) === 1), "the child's second round", 60_000);
    t.type(":agents\r");
    await t.waitFor((s) => s.some((l) => l.includes("└ helper [")), "the tree with the child under the parent", 20_000);
    const screen = t.screen();
    const top = screen.findIndex((l) => /^1\. \* \[a-[^\]]+\] /.test(l));
    expect(top, screen.join("\n")).toBeGreaterThanOrEqual(0);
    parent = /\[(a-[^\]]+)\]/.exec(screen[top] as string)![1]!;
    const childLine = screen[top + 1] as string;
    expect(childLine).toMatch(/^2\. {5}└ helper \[a-[^\]]+\] (idle|running|queued)/);
    child = /\[(a-[^\]]+)\]/.exec(childLine)![1]!;
    // The model's title is shown escaped, never as markup.
    expect(childLine).toContain("working: checking \\u{3c}the\\u{3e} list");

    t.type(":agent helper\r");
    await t.waitFor(() => status().includes("helper") && status().includes(`[${child}]`), "the status line to show the child", 10_000);
    await t.waitFor(has("child report ready"), "the child's transcript", 10_000);
    expect(status()).toContain("working: checking \\u{3c}the\\u{3e} list");
    // A prompt goes to the shown agent.
    t.type("and now, child?\r");
    await t.waitFor(has("the child heard you"), "the child's answer", 30_000);
    const toChild = fake.chatRequests.filter((r) => users(r).some((u) => u.includes("and now, child?")));
    expect(toChild.length).toBe(1);
    expect(isChild(toChild[0]!)).toBe(true);

    // Alt-N cycles back to the parent.
    t.type("\x1bn");
    await t.waitFor(() => status().includes(`[${parent}]`) && !status().includes("helper"), "the status line to show the parent", 10_000);
    // The listing's numbers switch too, and `main` is the session's first agent (no name needed).
    t.type(":agent 2\r");
    await t.waitFor(() => status().includes(`[${child}]`), "the second listed agent shown", 10_000);
    t.type(":agent main\r");
    await t.waitFor(() => status().includes(`[${parent}]`) && !status().includes("helper"), "the main agent shown", 10_000);
  }, 180_000);

  it("[agent-navigation.tui.fzf-pick] with fzf first on PATH the pick key runs it with fixed arguments and escaped rows; its choice is shown, and the terminal is the UI's again", async () => {
    writeFileSync(join(stubDir, "mode"), "helper");
    t.type("\x1ba");
    await t.waitFor(() => status().includes(`[${child}]`), "the picked child in the status line", 20_000);
    const input = readFileSync(join(stubDir, "input.txt"), "utf8").split("\n").filter(Boolean);
    expect(input.map((l) => l.split("\t")[0]).sort()).toEqual([parent, child].sort());
    expect(input.join("\n")).not.toContain("<the>");
    expect(readFileSync(join(stubDir, "args.txt"), "utf8").split("\n").filter(Boolean)).toEqual(["--no-multi", "--delimiter=\t", "--with-nth=2..", "--height=40%", "--layout=reverse", "--prompt=agent> "]);
    // Keys reach the editor again.
    await roundTrip(t);
  }, 60_000);

  it("[agent-navigation.tui.fzf-cancel] a cancelled fzf (exit 130) changes nothing: the same agent is shown, and the UI takes keys", async () => {
    writeFileSync(join(stubDir, "mode"), "cancel");
    t.type(":agents pick\r");
    await t.waitFor(has("no agent chosen"), "the cancel noted", 20_000);
    expect(status()).toContain(`[${child}]`);
    // A choice that is not in the session (any more) changes nothing either.
    writeFileSync(join(stubDir, "mode"), "a-");
    writeFileSync(join(stubDir, "fzf"), FZF_STUB.replace('grep "$mode" "$dir/input.txt" | head -n 1', 'printf "a-gone\\tgone\\n"'));
    t.type("\x1ba");
    await t.waitFor(has("is not in this session"), "the stale choice refused", 20_000);
    expect(status()).toContain(`[${child}]`);
    await roundTrip(t);
  }, 60_000);

  // Without fzf on PATH (the stub removed; skipped where a real fzf is installed) the key lists the tree.
  it.skipIf(findOnPath("fzf", process.env.PATH) !== undefined)("[tui.agents.no-fzf] without fzf the pick key shows the built-in agent tree and changes nothing", async () => {
    rmSync(join(stubDir, "fzf"));
    const before = t.all().filter((l) => l.startsWith("agents (:agent N, NAME, ID or main switches")).length;
    t.type("\x1ba");
    await t.waitFor((_s, all) => all.filter((l) => l.startsWith("agents (:agent N, NAME, ID or main switches")).length > before, "the built-in tree", 20_000);
    expect(status()).toContain(`[${child}]`);
    t.type(":quit\r");
    await t.exited;
  }, 60_000);

  it("[tui.agents.resume-focuses-main] a resumed session shows the agent its user started, not the child that agent started last; :agents marks that one", async () => {
    // The test before quits the UI only where no fzf is installed.
    const quit = await Promise.race([t.exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 50))]);
    if (!quit) {
      t.type(":quit\r");
      await t.exited;
    }
    waitForOwnedDaemons(w.home);
    const [session] = readdirSync(join(w.home, "state", "sessions")).filter((n) => n.startsWith("s-"));
    t = spawnTau(["resume", session as string], { env: w.env, cwd: w.project, cols: 160, rows: 40 });
    shared.push(() => t.kill());
    await t.waitFor(() => status().includes(" · ready"), "the resumed session to be ready", 60_000);
    expect(status()).toContain(`[${parent}]`);
    expect(status()).not.toContain("helper");
    t.type(":agents\r");
    await t.waitFor((s) => s.some((l) => /^1\. \* \[a-/.test(l)), "the listing", 20_000);
    expect(t.screen().find((l) => /^1\. \* \[a-/.test(l))).toContain(`[${parent}]`);
    expect(t.screen().find((l) => /^2\. /.test(l))).toMatch(/^2\. {5}└ helper /);
    t.type(":quit\r");
    await t.exited;
  }, 120_000);
});
