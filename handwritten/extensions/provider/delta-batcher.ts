// Stream deltas of one provider round, batched per turn of the event loop (used by every profile).
import type { Extension } from "../../sdk/index.js";
import type { ProviderCall } from "../../protocol/provider-request.js";

/**
 * Stream deltas, gathered until the current burst of the response has been read: a server that
 * sends a token per event would otherwise cost the harness a frame per token. A batch is flushed on
 * the next turn of the event loop, and always before the response's last report.
 */
export class DeltaBatcher {
  private text = "";
  private reasoning = "";
  private scheduled = false;

  constructor(
    private readonly ext: Extension,
    private readonly req: ProviderCall,
  ) {}

  add(text: string | undefined, reasoning: string | undefined): void {
    this.text += text ?? "";
    this.reasoning += reasoning ?? "";
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  flush(): void {
    this.scheduled = false;
    if (this.text === "" && this.reasoning === "") return;
    void this.ext.emit("provider.response_delta_reported", {
      prompt_id: this.req.prompt_id,
      round: this.req.round,
      ...(this.text ? { text: this.text } : {}),
      ...(this.reasoning ? { reasoning: this.reasoning } : {}),
    });
    this.text = "";
    this.reasoning = "";
  }
}
