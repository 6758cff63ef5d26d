// The one failure type of the shell-extension tools (SPEC-shell-tools).

/**
 * - `invalid_arguments`: the arguments do not match the tool's schema.
 * - `failed`: the tool could not do what was asked (missing file, no unique match, …).
 * - `cancelled`: the call's signal was aborted; partial output, if any, is in the message.
 */
export type ToolErrorCode = "invalid_arguments" | "failed" | "cancelled";

/** A failure whose message is written for the model and the user (no stack, no internals). */
export class ToolError extends Error {
  override readonly name = "ToolError";
  constructor(
    readonly code: ToolErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Throws `cancelled` if the signal is aborted. */
export function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new ToolError("cancelled", "The tool call was cancelled.");
}

/** The `code` of a Node system error, if any. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}

/** A short, path-free description of a system error for messages. */
export function describeFsError(error: unknown): string {
  switch (errnoCode(error)) {
    case "ENOENT":
      return "does not exist";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "ENOTDIR":
      return "a parent is not a directory";
    case "EISDIR":
      return "is a directory";
    case "ELOOP":
      return "too many levels of symbolic links";
    case "ENOSPC":
      return "no space left on device";
    case "EROFS":
      return "read-only file system";
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
