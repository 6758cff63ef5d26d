// The handoff's tools as the model calls them (SPEC-handoff): the user's request to start, the
// template's retrieval (the dossier file reserved, a Finish id minted) and Finish by that id. The
// model writes the dossier itself with its usual tools; nothing here restricts or swaps them.
import { ToolFailure, type Extension } from "../../sdk/index.js";
import type { Active, Handoff } from "./handoff.js";

/** The handoff of this agent that is not yet cutting over. */
function activeFor(h: Handoff, ctx: { agentId: string }): Active {
  const a = h.active;
  if (!a || a.agentId !== ctx.agentId) throw new ToolFailure("no handoff of this agent is under way");
  if (a.phase === "cutover") throw new ToolFailure("this handoff is already cutting over to its new session; nothing changed");
  return a;
}

export function registerHandoffTools(ext: Extension, h: Handoff): void {
  ext.registerTool({
    name: "handoff_start",
    description:
      "Starts a handoff of this session to a fresh session. Call this ONLY when the user has explicitly asked for a handoff in their own words; never on your own initiative.",
    parameters: { type: "object", properties: { user_request: { type: "string", maxLength: 1024, description: "the user's words asking for the handoff" } }, required: ["user_request"], additionalProperties: false },
    run: async (args, ctx) => {
      const words = typeof args === "object" && args !== null ? (args as { user_request?: unknown }).user_request : undefined;
      if (typeof words !== "string" || words.trim() === "") throw new ToolFailure("user_request must quote the user's request for a handoff");
      return { output: `${h.start(ctx.agentId, true)}. Finish your turn now; the handoff's request follows.` };
    },
  });
  ext.registerTool({
    name: "session_handoff_get_template",
    description:
      "During a handoff of this session: answers the dossier template, the exact file reserved for the dossier, where this session's transcript is, and the Finish id. Repeated calls answer the same.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    run: async (_args, ctx) => ({ output: h.retrieve(activeFor(h, ctx)) }),
  });
  ext.registerTool({
    name: "session_handoff_finish",
    description: "During a handoff of this session: once the dossier is written into its reserved file, hands the work over. Takes only the Finish id that the template's retrieval gave.",
    parameters: { type: "object", properties: { id: { type: "string", maxLength: 64 } }, required: ["id"], additionalProperties: false },
    run: async (args, ctx) => {
      const id = typeof args === "object" && args !== null ? (args as { id?: unknown }).id : undefined;
      return { output: h.finish(activeFor(h, ctx), id) };
    },
  });
}
