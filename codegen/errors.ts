// A codegen failure that names the file and the offending row or id; main prints it and exits 1.
// Coded failures (codes.ts) put their stable code right after the place: `file:line: TAU-C0xx …`.
import type { CodegenCode } from "./codes.js";

export class CodegenError extends Error {
  constructor(
    readonly file: string,
    readonly detail: string,
    readonly code?: CodegenCode,
  ) {
    super(code === undefined ? `${file}: ${detail}` : `${file}: ${code} ${detail}`);
    this.name = "CodegenError";
  }
}

/** Collects every problem of a run so one invocation reports them all. */
export class Problems {
  readonly list: CodegenError[] = [];
  add(file: string, detail: string): void {
    this.list.push(new CodegenError(file, detail));
  }
  /** A problem with a stable code; `file` may carry a line (`handwritten/cli/main.ts:12`). */
  coded(code: CodegenCode, file: string, detail: string): void {
    this.list.push(new CodegenError(file, detail, code));
  }
  throwIfAny(): void {
    if (this.list.length > 0) throw new AggregateCodegenError(this.list);
  }
}

export class AggregateCodegenError extends Error {
  constructor(readonly problems: CodegenError[]) {
    super(problems.map((p) => p.message).join("\n"));
    this.name = "AggregateCodegenError";
  }
}
