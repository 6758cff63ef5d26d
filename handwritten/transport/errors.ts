// Typed transport failures: a code and a message that names the path but never peer content.

export type RuntimeDirProblem = "symlink" | "not_directory" | "wrong_owner" | "wrong_mode" | "io";

/** The runtime directory is unusable; tau fails closed rather than repairing someone else's folder. */
export class RuntimeDirError extends Error {
  constructor(
    readonly problem: RuntimeDirProblem,
    readonly dir: string,
    detail: string,
    hint?: string,
  ) {
    super(`runtime directory ${JSON.stringify(dir)} ${detail}; refusing to use it${hint ? ` (${hint})` : ""}`);
    this.name = "RuntimeDirError";
  }
}

export type ConnectFailure = "not_found" | "refused" | "timeout" | "path_too_long" | "io";

/** A client connect that did not produce a connection. */
export class ConnectError extends Error {
  constructor(
    readonly failure: ConnectFailure,
    readonly path: string,
    readonly errno?: string,
  ) {
    super(`cannot connect to ${JSON.stringify(path)}: ${failure}${errno ? ` (${errno})` : ""}`);
    this.name = "ConnectError";
  }
}

/** A server that could not listen (path in use, path too long, runtime directory refused). */
export class ListenError extends Error {
  constructor(
    readonly path: string,
    readonly errno: string,
    detail: string,
  ) {
    super(`cannot listen on ${JSON.stringify(path)}: ${detail}`);
    this.name = "ListenError";
  }
}

export function errnoOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "EUNKNOWN";
}
