// A codegen failure that names the file and the offending row or id; main prints it and exits 1.
export class CodegenError extends Error {
  constructor(
    readonly file: string,
    readonly detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = "CodegenError";
  }
}

/** Collects every problem of a run so one invocation reports them all. */
export class Problems {
  readonly list: CodegenError[] = [];
  add(file: string, detail: string): void {
    this.list.push(new CodegenError(file, detail));
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
