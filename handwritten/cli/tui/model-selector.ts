// `:model [MODEL]`: the models the providers list, and the focused agent's choice among them, checked
// against those lists before anything is sent (SPEC-provider-chat-completions, "Choosing a model").
import type { SessionClient } from "../session-client.js";
import { checkModelChoice } from "../../config/models.js";
import type { UiContext } from "./context.js";

export class ModelSelector {
  constructor(private readonly ui: UiContext) {}

  /** Lists the models (no `model`), or selects `model` for the focused agent. */
  command(client: SessionClient, model: string | undefined): void {
    const { transcript } = this.ui;
    if (model === undefined) {
      const models = transcript.models.map((m) => `${m.provider}/${m.id}`);
      return this.ui.note("info", models.length > 0 ? `models: ${models.join(", ")} — current: ${this.ui.current()?.model ?? "default"}` : "no model is available yet");
    }
    // Refused here, with close matches, before anything is sent.
    const choice = checkModelChoice(model, { models: transcript.models, listed_providers: transcript.listedProviders });
    if (!choice.ok) return this.ui.note("error", `${choice.message} — :model lists the models`);
    client.emit("ui.model_select", { agent_id: this.ui.focus(), model });
  }
}
