// The handoff's tools as the model calls them (SPEC-handoff): the user's request to start, the
// agent's answers to the call (with its key), and the writer turn's dossier submission.
import { ToolFailure, type Extension } from "../../sdk/index.js";
import { contentProblem } from "./recovery.js";
import { DOSSIER_MAX_CHARS, type Active, type Handoff } from "./handoff.js";

const keyArgs = { type: "object", properties: { key: { type: "string", maxLength: 128 } }, required: ["key"], additionalProperties: false };

/** The handoff waiting for this agent's answer, when `args` carries its key. */
function checkKey(h: Handoff, args: unknown, ctx: { agentId: string }): Active {
  const a = h.active;
  const key = typeof args === "object" && args !== null ? (args as { key?: unknown }).key : undefined;
  if (!a || a.agentId !== ctx.agentId || (a.phase !== "requested" && a.phase !== "confirming")) throw new ToolFailure("no handoff is waiting for an answer");
  if (key !== a.key) throw new ToolFailure("that is not the key of the current handoff request");
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
      return { output: `${h.start(ctx.agentId, true)}. Finish your turn now.` };
    },
  });
  ext.registerTool({
    name: "handoff_go",
    description: "Answers a handoff request: you are at a safe point and ready to write the handoff dossier. Only with the key the request gave you.",
    parameters: keyArgs,
    run: async (args, ctx) => {
      const a = checkKey(h, args, ctx);
      h.go(a);
      return { output: "GO accepted. End this turn now without calling any other tool; you will be asked for the dossier next." };
    },
  });
  ext.registerTool({
    name: "handoff_go_deferred",
    description: "Answers a handoff request the user started: ready, but the user should confirm first (Ready / Wait / Cancel). Only with the key the request gave you.",
    parameters: keyArgs,
    run: async (args, ctx) => {
      const a = checkKey(h, args, ctx);
      if (!a.manual) throw new ToolFailure("this handoff started automatically; answer with handoff_go");
      if (a.reminder) clearTimeout(a.reminder);
      h.setPhase(a, "confirming");
      ext.notice("info", "handoff: the agent is ready. :handoff ready to go on, :handoff wait to keep working, :handoff cancel to stop");
      return { output: "The user is asked to confirm. End this turn now." };
    },
  });
  ext.registerTool({
    name: "handoff_submit",
    description: "Submits the handoff dossier (Markdown) with the submission id you were given. The only tool of the writer turn.",
    parameters: {
      type: "object",
      properties: { id: { type: "string", maxLength: 64 }, content: { type: "string" } },
      required: ["id", "content"],
      additionalProperties: false,
    },
    run: async (args, ctx) => {
      const a = h.active;
      const o = typeof args === "object" && args !== null ? (args as { id?: unknown; content?: unknown }) : {};
      if (!a || a.agentId !== ctx.agentId || a.phase !== "writing" || a.submitted) throw new ToolFailure("no handoff is waiting for a dossier");
      if (o.id !== a.submissionId) throw new ToolFailure("that is not the current submission id");
      const problem = contentProblem(o.content, DOSSIER_MAX_CHARS);
      if (problem !== undefined) throw new ToolFailure(problem);
      return { output: await h.submit(a, o.content as string) };
    },
  });
}
