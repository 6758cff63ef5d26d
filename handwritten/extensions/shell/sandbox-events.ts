// The sandbox joined to the extension's events (SPEC-sandbox): its diagnostics and classifier
// selection replayed, review results and the user's approval answers delivered, the user's own
// prompts withdrawing their pending decisions, and the `:sandbox` command served.
import { RequestRefusal, type Extension } from "../../sdk/index.js";
import type { Sandbox } from "./sandbox/index.js";

export function followSandboxEvents(ext: Extension, sandbox: Sandbox): void {
  ext.on("sandbox.diagnostic_recorded", (e) => {
    if (e.replay) sandbox.restoreDiagnostic(e.data);
  });
  ext.on("sandbox.classifier_selected", (e) => {
    if (e.replay) sandbox.restoreSelection(e.data);
  });
  ext.onDirect("sandbox.review_result", (data) => sandbox.reviewAnswered(data));
  ext.on("sandbox.approval_answer", (e) => {
    if (!e.replay) sandbox.answer(e.data.approval_id, e.data.decision);
  });
  // Only the user's own prompt (steered or queued) withdraws their pending decisions: another
  // agent's message, a peer's, an extension's or the harness's (a watch update) is no answer of theirs.
  ext.on("agent.prompt_submitted", (e) => {
    if (!e.replay && e.data.source === "human_ui") sandbox.userPrompted(e.data.agent_id);
  });
  // `:sandbox ARGS` from a UI: the command's text, or its failure as the refusal.
  ext.serve("sandbox.command_request", async ({ args }) => {
    const r = await sandbox.command(args);
    if (!r.ok) throw new RequestRefusal<"sandbox.command_request">(r.text);
    return { text: r.text };
  });
}
