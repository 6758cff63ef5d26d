// The protocol-free shape of a shell-extension tool (SPEC-shell-tools).

/** A JSON Schema object (the subset `schema.ts` understands). */
export type JsonSchema = Readonly<Record<string, unknown>>;

export interface ToolContext {
  /** Absolute working directory; relative paths in arguments resolve against it. */
  readonly cwd: string;
  /** Aborted when the call is cancelled. */
  readonly signal: AbortSignal;
  /** Throttled progress text for the UI (never part of the result). */
  onProgress?(text: string): void;
  /** The filesystem policy the file tools obey; without one they have the user's full rights. */
  readonly access?: FileAccess;
  /** An attached editor's files: `read` takes the editor's text (unsaved changes included) when it has one. */
  readonly editor?: EditorFiles;
}

/** An editor's text of files (SPEC-acp, "The editor's files"). */
export interface EditorFiles {
  /** Lines `line` … `line + limit - 1` of file `real` as the editor has them, or undefined when it cannot say. */
  read(real: string, line: number, limit: number, signal: AbortSignal): Promise<string | undefined>;
}

/**
 * What the file tools may read and write (SPEC-sandbox, "Scope"). Every path given is where a file
 * really is or will be (no link in it), found from an open descriptor (landing.ts); `requested` is
 * the path as the model named it, resolved but with its links.
 */
export interface FileAccess {
  /** Why `real` may not be read (or listed, or searched), or undefined when it may. */
  readRefusal(real: string): string | undefined;
  /**
   * Resolves once a write of `content` to `real` may go ahead — the user may be asked first — and
   * throws a ToolError saying why not otherwise.
   */
  checkWrite(w: { real: string; requested: string; content: string; signal: AbortSignal }): Promise<void>;
}

export interface ToolDisplay {
  title?: string;
  diff?: string;
  summary?: string;
}

export interface ToolResult {
  /** What the model sees. */
  output: string;
  /** What a UI may show instead of / beside the output. */
  display?: ToolDisplay;
  /** The tool ran but failed (a command's non-zero exit, signal or timeout); the model still reads the output. */
  failed?: boolean;
}

export interface Tool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments (type object, bounded, additionalProperties false). */
  readonly parameters: JsonSchema;
  run(args: unknown, ctx: ToolContext): Promise<ToolResult>;
}
