// The file tools' side of the one filesystem policy (SPEC-sandbox, "Scope"): for one call of
// `read`, `write`, `edit`, `grep`, `find` or `ls`, what it may read and where it may write, by the
// sandbox's current policy and state; a write outside the writable set is asked of the user like a
// command's (the manual prompt: allow once, allow for the session, deny), or refused with the fix
// when nobody may be asked. Protected paths are refused whatever the state.
import type { SandboxState } from "../../../../generated/index.js";
import { ToolError, type FileAccess } from "../tools/index.js";
import type { Approvals } from "./approvals.js";
import type { Diagnostics } from "./diagnostics.js";
import { fileRules, readRefusal, writeVerdict, type Enforcement, type FileRules } from "./file-policy.js";
import type { SandboxLifecycle } from "./lifecycle.js";

/** One file-tool call, as the prompt names it. */
export interface FileCall {
  readonly agentId: string;
  readonly callId: string;
  /** The tool's name (`write`, `edit`, …). */
  readonly tool: string;
}

/** While the user has the sandbox off, the tools keep only the protected paths, as commands keep nothing. */
export function enforcementIn(state: SandboxState): Enforcement {
  return state === "bypassed" || state === "suspended" ? "protected" : "full";
}

export class FileToolAccess {
  constructor(
    private readonly p: { readonly life: SandboxLifecycle; readonly approvals: Approvals; readonly diagnostics: Diagnostics },
    private readonly projectRoot: string,
  ) {}

  /** The policy for one call, as it is now (the sandbox has started). */
  access(call: FileCall): FileAccess {
    const rules = fileRules(this.p.life.policy(), this.projectRoot, enforcementIn(this.p.life.state));
    return {
      readRefusal: (real) => readRefusal(rules, real),
      checkWrite: (w) => this.checkWrite(rules, call, w),
    };
  }

  private async checkWrite(rules: FileRules, call: FileCall, w: { real: string; requested: string; content: string; signal: AbortSignal }): Promise<void> {
    const { life, approvals, diagnostics } = this.p;
    const verdict = writeVerdict(rules, w);
    if (verdict.kind === "ok") return;
    if (verdict.kind === "refused") {
      diagnostics.record("refused", "filesystem_write", call.callId);
      throw new ToolError("failed", verdict.why);
    }
    const { grant } = verdict;
    if (life.mode === "non-interactive") {
      diagnostics.record("refused", "filesystem_write", call.callId);
      throw new ToolError(
        "failed",
        `Cannot write ${w.requested}: ${grant} is outside the folders the sandbox lets the model write, and nobody was asked (non-interactive). The user can allow it with \`:sandbox filesystem allow-write add ${grant}\` in the interactive UI.`,
      );
    }
    const outcome = await approvals.ask(
      { kind: "filesystem_write", target: grant, choices: ["allow_retry", "allow_adapt", "deny"], calls: [{ agentId: call.agentId, callId: call.callId, command: `${call.tool} ${w.requested}` }] },
      w.signal,
    );
    if (outcome === "allowed") return;
    if (outcome === "allowed_adapt") {
      // The folder joins the writable set for the session: for the file tools and commands alike.
      life.grants.allowWrite.add(grant);
      return;
    }
    const why = outcome === "revoked" ? "the request was withdrawn (cancelled, a new prompt, a policy change, or no answer in time)" : "the user refused it";
    throw new ToolError("failed", `Cannot write ${w.requested}: write access to ${grant} was not granted: ${why}.`);
  }
}
