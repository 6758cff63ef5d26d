// Words of notices both the terminal UI and `tau run` show, so the two say the same thing.
import type { FinishReason } from "../../../generated/index.js";

/** The notice for an answer that ended short, by finish reason. */
export const CUT_SHORT = {
  length: "the answer is incomplete: it reached the model's output limit (finish_reason length)",
  content_filter: "the answer is incomplete: the provider's content filter stopped it (finish_reason content_filter)",
} as const satisfies Partial<Record<FinishReason, string>>;

export function cutShortNotice(reason: FinishReason): string | undefined {
  return reason === "length" || reason === "content_filter" ? CUT_SHORT[reason] : undefined;
}

/**
 * An extension's notice as a UI shows it: after the instance's name, so a user can tell who says
 * it (SPEC-harness-notices); a text that already begins with that name is not named twice.
 */
export function extensionNoticeText(instance: string, text: string): string {
  return text.startsWith(`${instance}: `) ? text : `${instance}: ${text}`;
}
