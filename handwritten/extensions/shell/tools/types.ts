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
}

export interface Tool {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the arguments (type object, bounded, additionalProperties false). */
  readonly parameters: JsonSchema;
  run(args: unknown, ctx: ToolContext): Promise<ToolResult>;
}
