// `tau ext handoff`: session handoff (SPEC-handoff), built only on the extension SDK. It asks the
// harness for everything it cannot do itself — prompts into the agent (`agent.internal_prompt_request`)
// and the replacement session (`session.handoff_request`) — and
// holds the user's prompts of the deferral window by intercepting them before they commit. Its
// parts: the handoff's course (handoff.ts), the deferred prompts' release (release.ts), its tools
// (tools.ts), the events it follows (events.ts), the `:handoff` command (command.ts), and in a
// replacement session the end of its first turn (receiving.ts).
import { Extension } from "../../sdk/index.js";
import { resolveRoots } from "../../config/index.js";
import { serveHandoffCommand } from "./command.js";
import { followHandoffEvents } from "./events.js";
import { Handoff, settingsOf } from "./handoff.js";
import { Receiving } from "./receiving.js";
import { registerHandoffTools } from "./tools.js";
import { recoveryFile } from "./recovery.js";

export async function main(): Promise<void> {
  const ext = await Extension.connect();
  const declared = ext.settings("handoff");
  if (declared === undefined) return;
  const sessionId = ext.configuration.session_id;
  const roots = resolveRoots();
  const h = new Handoff({
    ext,
    settings: settingsOf(declared),
    roots,
    project: process.cwd(),
    sessionId,
    recoveryPath: recoveryFile(roots.config, sessionId),
  });
  registerHandoffTools(ext, h);
  followHandoffEvents(ext, h, new Receiving({ ext, sessionId, configRoot: roots.config, warn: (t) => h.warn(t) }));
  serveHandoffCommand(ext, h);
  ext.ready();
}
