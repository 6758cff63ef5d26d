// `cat file | tau run "summarize"`: the prompt and the piped text both reach the model, the piped
// text labelled as standard input; too much is refused before anything is sent (issue 40, item 7).
import { spawn } from "node:child_process";
import { closeSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useCleanups, useFakeOpenAI, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse } from "../../support/fake-openai.js";
import { TAU_BIN } from "../../support/paths.js";
import { STDIN_PROMPT_MAX_BYTES } from "../../../handwritten/cli/run/index.js";

let fake!: FakeOpenAI;
useFakeOpenAI((s) => (fake = s));
const cleanups = useCleanups();

/** `tau run ARGS` with standard input from `stdin`: `cat FILE |` (a real pipe, as a shell makes) or `< FILE`. */
function runWithInput(args: string[], stdin: { pipe: string } | { file: string }, env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const fd = "file" in stdin ? openSync(stdin.file, "r") : undefined;
    const child =
      "pipe" in stdin
        ? spawn("sh", ["-c", 'f="$1"; shift; cat "$f" | "$@"', "sh", stdin.pipe, process.execPath, TAU_BIN, ...args], { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
        : spawn(process.execPath, [TAU_BIN, ...args], { cwd, env: { ...process.env, ...env }, stdio: [fd as number, "pipe", "pipe"] });
    if (fd !== undefined) closeSync(fd);
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The text of the last user message of request `at`. */
function userText(at: number): string {
  const body = fake.chatRequests[at]!.body as { messages: Array<{ role: string; content: unknown }> };
  const user = body.messages.filter((m) => m.role === "user").at(-1);
  return typeof user?.content === "string" ? user.content : JSON.stringify(user?.content);
}

describe("piped input beside a prompt", () => {
  it("[run.piped-input.labelled] `cat file | tau run TEXT` and `tau run TEXT < file` send the prompt, then the file's text in a block naming it standard input", async () => {
    const { env, project } = workspaceIn(cleanups);
    const openai = { ...env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "k", OPENAI_MODEL: "fake-model" };
    const file = join(project, "report.txt");
    writeFileSync(file, "line one of the report\nline two\n");
    // The harness wraps every user prompt in <user> tags (SPEC-agent-loop).
    const expected = "<user>\nsummarize\n\nThe text below was piped to tau run on standard input:\n<stdin>\nline one of the report\nline two\n</stdin>\n</user>";
    for (const stdin of [{ pipe: file }, { file }]) {
      fake.enqueue(textResponse("A report."));
      const before = fake.chatRequests.length;
      const r = await runWithInput(["run", "summarize"], stdin, openai, project);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("A report.\n");
      expect(fake.chatRequests.length).toBe(before + 1);
      expect(userText(before)).toBe(expected);
    }
    // An empty pipe leaves the prompt as it is.
    const empty = join(project, "empty.txt");
    writeFileSync(empty, "");
    fake.enqueue(textResponse("Plain."));
    const before = fake.chatRequests.length;
    const r = await runWithInput(["run", "-p", "just this"], { pipe: empty }, openai, project);
    expect(r.code).toBe(0);
    expect(userText(before)).toBe("<user>\njust this\n</user>");
  });

  it("[run.piped-input.bounded] piped text that with the prompt is over 8 MiB is refused with exit 2 before anything is sent", async () => {
    const { env, project } = workspaceIn(cleanups);
    const openai = { ...env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "k", OPENAI_MODEL: "fake-model" };
    const big = join(project, "big.txt");
    writeFileSync(big, "x".repeat(STDIN_PROMPT_MAX_BYTES));
    const before = fake.chatRequests.length;
    const r = await runWithInput(["run", "summarize"], { pipe: big }, openai, project);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("tau run: the input piped to tau run is, with the prompt, over 8 MiB");
    expect(r.stderr).toContain("TAU-E0108");
    expect(r.stdout).toBe("");
    expect(fake.chatRequests.length).toBe(before);
  });
});
