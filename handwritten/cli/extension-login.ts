// A sign-in run in an extension's `--login` mode (`tau provider login`, `tau mcp login`): the
// extension makes the network calls under its own rules and writes the tokens itself, so none
// passes through this process. The request is one JSON line on its standard input; what the user
// must do reaches the terminal on its standard error; its answer is the last line of its output.
import { spawn } from "node:child_process";
import { isSecretVariable } from "../protocol/index.js";
import { selfCommand } from "../transport/index.js";

/** Largest answer read. */
const MAX_ANSWER_CHARS = 64 * 1024;

/** The answer of `tau ext EXTENSION --login`, or `{ok: false, reason}` when it gave none. */
export function extensionLogin(extension: string, request: object): Promise<Record<string, unknown>> {
  const [command, ...args] = selfCommand() as [string, ...string[]];
  const env: NodeJS.ProcessEnv = {};
  for (const [k, value] of Object.entries(process.env)) if (!isSecretVariable(k)) env[k] = value;
  return new Promise((resolve) => {
    const child = spawn(command, [...args, "ext", extension, "--login"], { env, stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.on("error", (err) => resolve({ ok: false, reason: `the sign-in could not start: ${err.message}` }));
    child.stdin.on("error", () => {});
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      if (out.length < MAX_ANSWER_CHARS) out += d;
    });
    child.on("close", () => {
      try {
        const v: unknown = JSON.parse(out.trim().split("\n").pop() ?? "");
        resolve(typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : { ok: false, reason: "the sign-in gave no answer" });
      } catch {
        resolve({ ok: false, reason: "the sign-in gave no answer" });
      }
    });
    child.stdin.end(`${JSON.stringify(request)}\n`);
  });
}
