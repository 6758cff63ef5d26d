// Requests declared in spec/ (SPEC-wire-protocol, "Requests"): codegen checks each declaration and
// writes its descriptor; a request added to spec/ needs its two handlers and nothing else.
import { describe, expect, it } from "vitest";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { generate, writeTree } from "../../../codegen/main.js";
import { codegenProblems, useScratchRoots } from "../../support/scratch-root.js";
import { REPO_ROOT } from "../../support/paths.js";

const scratch = useScratchRoots();
const problemsOf = codegenProblems;

/** The worked example: a UI asks how long the session has run. */
const UPTIME = `
/** How long this session's daemon has run (only attached UIs). */
@extension("x-tau-message", "ui_uptime_request")
@extension("x-tau-direction", "to_harness")
@extension("x-tau-request", #{ result: "ui_uptime_result", callers: #["ui"] })
model UiUptimeRequestMessage {
  message: "ui_uptime_request";
  payload: {
    request_id: Id;
  };
}

@extension("x-tau-message", "ui_uptime_result")
@extension("x-tau-direction", "from_harness")
model UiUptimeResultMessage {
  message: "ui_uptime_result";
  payload: {
    request_id: Id;
    seconds: Count;
  };
}
`;

describe("requests in the spec", () => {
  it("[requests.declared.spec-and-two-handlers] a request added to spec/ is served and asked with one line each, typed from its declaration", async () => {
    const root = scratch();
    appendFileSync(join(root, "spec", "wire.tsp"), UPTIME);
    const files = await generate(root);
    const requests = files.get("requests.ts") ?? "";
    expect(requests).toContain('"ui_uptime_request": { via: "message", name: "ui_uptime_request", result: "ui_uptime_result", callers: ["ui"], errors: [] },');
    expect(requests).toContain('"ui_uptime_request": Omit<T.UiUptimeResultMessage["payload"], "request_id">;');
    writeTree(join(root, "generated"), files);
    // The answering side: one serve. The asking side: one request. Nothing else changes.
    const answering = join(root, "handwritten", "harness", "socket-requests.ts");
    const text = readFileSync(answering, "utf8");
    const anchor = "      .serve(REQUESTS.peer_agents_request,";
    expect(text).toContain(anchor);
    writeFileSync(answering, text.replace(anchor, `      .serve(REQUESTS.ui_uptime_request, () => ({ seconds: Math.floor(process.uptime()) }))\n${anchor}`));
    writeFileSync(
      join(root, "handwritten", "cli", "uptime.ts"),
      'import type { SessionClient } from "./session-client.js";\n\nexport async function uptime(client: SessionClient): Promise<number> {\n  return (await client.request("ui_uptime_request", {})).seconds;\n}\n',
    );
    writeFileSync(join(root, "tsconfig.json"), JSON.stringify({ extends: join(REPO_ROOT, "tsconfig.json"), include: ["handwritten", "generated"] }));
    const tsc = spawnSync(process.execPath, [join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(root, "tsconfig.json"), "--noEmit"], { encoding: "utf8" });
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.status).toBe(0);
    // A result field the handler does not give is a type error, so the declaration holds both sides.
    writeFileSync(answering, text.replace(anchor, `      .serve(REQUESTS.ui_uptime_request, () => ({ minutes: 1 }))\n${anchor}`));
    const wrong = spawnSync(process.execPath, [join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(root, "tsconfig.json"), "--noEmit"], { encoding: "utf8" });
    expect(wrong.status).not.toBe(0);
    expect(wrong.stdout).toContain("socket-requests.ts");
  }, 120_000);

  it("[requests.declared.checked] refuses a declaration whose answer, callers, codes or fields do not hold", async () => {
    const root = scratch();
    appendFileSync(
      join(root, "spec", "wire.tsp"),
      `
@extension("x-tau-message", "ui_bad_request")
@extension("x-tau-direction", "to_harness")
@extension("x-tau-request", #{ result: "ui_nowhere_result", callers: #["ui", "martian"], errors: #["teapot"] })
model UiBadRequestMessage {
  message: "ui_bad_request";
  payload: {};
}

@extension("x-tau-message", "ui_answerless_request")
@extension("x-tau-direction", "to_harness")
@extension("x-tau-request", #{ result: "ui_session_accepted", callers: #["ui"] })
model UiAnswerlessRequestMessage {
  message: "ui_answerless_request";
  payload: {
    request_id: Id;
  };
}
`,
    );
    appendFileSync(
      join(root, "spec", "events", "ui.tsp"),
      `
@extension("x-tau-event", "ui.bell")
@extension("x-tau-request", #{ result: "ui.create_agent_result", refusal: "reason", success: #["agent_id", "ok"] })
model UiBell {
  agent_id: Id;
}
`,
    );
    appendFileSync(join(root, "records", "SPEC-ui-commands.md"), "| ui.bell | ui:attached | transient | no | — |\n");
    const problems = await problemsOf(root);
    expect(problems.sort()).toEqual(
      [
        "spec/ (model UiBadRequestMessage): request ui_bad_request: unknown caller martian (known: ui, client, peer, extension)",
        "spec/ (model UiBadRequestMessage): request ui_bad_request: teapot is not an ErrorCode",
        "spec/ (model UiBadRequestMessage): request ui_bad_request: its result ui_nowhere_result is not a wire message",
        "spec/ (model UiAnswerlessRequestMessage): request ui_answerless_request: its result ui_session_accepted carries no request_id",
        "spec/ (model UiBell): request ui.bell needs a required request_id: Id (its answer is matched by it)",
        "spec/ (model UiBell): request ui.bell: refusal must name a text field of ui.create_agent_result (the reason when ok is false)",
        "spec/ (model UiBell): request ui.bell: success names ok, which is not an optional field of ui.create_agent_result (besides the refusal)",
        "spec/ (model UiCreateAgent): event ui.create_agent_result already answers ui.bell; an event answers one request",
      ].sort(),
    );
  });
});
