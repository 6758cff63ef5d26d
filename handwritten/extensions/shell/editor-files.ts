// The editor's text of a file for the `read` tool (SPEC-acp, "The editor's files"): while an
// attached editor offers its files (`editor.files_offered`), a read asks it (`editor.read_request`)
// and takes its answer (`editor.read_result`) within EDITOR_READ_TIMEOUT_MS; otherwise, and on any
// failure, the file is read from disk as always. What may be read is decided before, by the policy.
import { AwaitedAnswers, type Extension } from "../../sdk/index.js";
import type { EditorFiles } from "./tools/index.js";

/** How long a read waits for the editor before it reads the disk instead. */
export const EDITOR_READ_TIMEOUT_MS = 5_000;

export class EditorBridge implements EditorFiles {
  private offered = false;
  private readonly reads = new AwaitedAnswers<string | undefined>();

  constructor(private readonly ext: Extension) {
    ext.subscribe(["editor.files_offered"], ["editor.files_offered", "editor.read_result"]);
    ext.on("editor.files_offered", (e) => {
      this.offered = e.data.read;
    });
    ext.on("editor.read_result", (e) => {
      if (e.replay) return;
      this.reads.answer(e.data.request_id, e.data.error === undefined ? e.data.content : undefined);
    });
  }

  get available(): boolean {
    return this.offered;
  }

  async read(path: string, line: number, limit: number, signal: AbortSignal): Promise<string | undefined> {
    if (!this.offered) return undefined;
    const asked = await this.reads.ask((id) => void this.ext.emit("editor.read_request", { request_id: id, path, line, limit }), { timeoutMs: EDITOR_READ_TIMEOUT_MS, onTimeout: undefined, signal, onAbort: undefined });
    return asked.answer;
  }
}
