// `tau ext swarm` (SPEC-swarm): a worker of a swarm — seed 000's std-swarm. It links to the one
// coordinator whose Iroh endpoint id its settings pin, takes remote prompts and blocker answers into
// its session's agent only through `agent.internal_prompt_request`, and sends the turns' results and
// the agent's blocker questions (`swarm_ask`) back. The credential comes only from its declared
// `configure` secret and is never written anywhere but into `hello`.
import { Extension, ToolFailure } from "../../sdk/index.js";
import { bindEndpoint, keyProblem, type IrohEndpoint } from "../../swarm/index.js";
import { SwarmLink } from "./link.js";
import { SwarmWorker } from "./worker.js";

/** The longest blocker question the tool takes, in characters (the worker's max_text_bytes bounds it too). */
const MAX_QUESTION_CHARS = 16 * 1024;

export async function main(): Promise<void> {
  const ext = await Extension.connect();
  const cfg = ext.settings("swarm");
  if (cfg === undefined) return;
  const secrets = ext.configuration.secrets;
  const credential = secrets[cfg.credential_secret];
  const key = secrets[cfg.key_secret];
  if (credential === undefined || credential === "") return ext.configError(`setting credential_secret: the secret ${cfg.credential_secret} was not handed over (name it under secrets: and create it with tau swarm credential)`);
  if (key === undefined) return ext.configError(`setting key_secret: the secret ${cfg.key_secret} was not handed over (name it under secrets: and create it with tau swarm key)`);
  const badKey = keyProblem(key);
  if (badKey !== undefined) return ext.configError(`setting key_secret: the secret ${cfg.key_secret} ${badKey}`);

  const diagnostic = (text: string): void => void process.stderr.write(`tau ext swarm ${ext.instance}: ${text}\n`);
  let link: SwarmLink | undefined;
  const worker = new SwarmWorker(
    { maxCommands: cfg.max_commands ?? 4096, maxBlockers: cfg.max_blockers ?? 256, maxUnacked: cfg.max_unacked ?? 1024, maxTextBytes: cfg.max_text_bytes ?? 262144 },
    {
      submit: (agentId, text) => void ext.emit("agent.internal_prompt_request", { agent_id: agentId, mode: "queue", text }),
      send: (update) => link?.deliver(update),
      diagnostic,
    },
  );
  follow(ext, worker);
  ext.registerTool({
    name: "swarm_ask",
    description:
      "Ask the swarm coordinator a question you are blocked on. Use only when you cannot go on without its answer. The answer arrives later as a new prompt naming the question's id; end your turn after asking.",
    parameters: { type: "object", properties: { question: { type: "string", maxLength: MAX_QUESTION_CHARS } }, required: ["question"], additionalProperties: false },
    group: "swarm",
    run: async (args) => {
      const question = (args as { question?: unknown }).question;
      if (typeof question !== "string" || question.trim() === "") throw new ToolFailure("question: a non-empty text is needed");
      if (question.length > MAX_QUESTION_CHARS) throw new ToolFailure(`question: at most ${MAX_QUESTION_CHARS} characters`);
      const id = worker.ask(question);
      if (id === undefined) throw new ToolFailure("this worker's blocker history is full (max_blockers): no further question can be asked until it restarts");
      return { output: `Question ${id} was sent to the swarm coordinator. Its answer will arrive as a new prompt; end this turn now.` };
    },
  });

  let endpoint: IrohEndpoint;
  try {
    endpoint = await bindEndpoint({ key: key.trim(), ...(cfg.relay_url !== undefined ? { relayUrl: cfg.relay_url } : {}) });
  } catch (err) {
    return ext.configError(`the Iroh endpoint could not start: ${(err as Error).message}`);
  }
  link = new SwarmLink(
    endpoint,
    worker,
    {
      worker: cfg.worker,
      coordinator: cfg.coordinator,
      addresses: cfg.addresses,
      ...(cfg.relay_url !== undefined ? { relayUrl: cfg.relay_url } : {}),
      reconnectMs: cfg.reconnect_ms ?? 2000,
      connectTimeoutMs: cfg.connect_timeout_ms ?? 10000,
      credential,
    },
    {
      diagnostic,
      refused: (reason) => {
        diagnostic(`the coordinator refused this worker (${reason})`);
        const why = reason === "superseded" ? "superseded: another process of this worker connected" : reason;
        ext.notice("error", `swarm: coordinator ${cfg.coordinator.slice(0, 10)}… refused worker ${cfg.worker} (${why}); no remote prompt will arrive until tau restarts`);
      },
    },
  );
  ext.onHarnessGone(async () => {
    link?.stop();
    await endpoint.close();
  });
  ext.ready();
  diagnostic(`endpoint ${endpoint.id().toString().slice(0, 10)}… linking to coordinator ${cfg.coordinator.slice(0, 10)}… (incarnation ${worker.incarnation})`);
  void link.run();
}

/** The agent's facts the worker follows: which agent takes prompts, and how each of our prompts goes. */
function follow(ext: Extension, worker: SwarmWorker): void {
  ext.subscribe(["agent.started"], ["agent.started", "agent.prompt_submitted", "agent.prompt_started", "provider.response_finished", "agent.outer_turn_finished", "agent.prompt_failed"]);
  ext.on("agent.started", (e) => {
    if (worker.agentId === undefined && e.data.parent_id === undefined) worker.agentId = e.data.agent_id;
  });
  ext.on("agent.prompt_submitted", (e) => {
    if (!e.replay && e.data.source === "extension" && e.data.submitter === ext.instance && e.data.agent_id === worker.agentId) worker.promptSubmitted(e.data.prompt_id);
  });
  ext.on("agent.prompt_started", (e) => {
    if (!e.replay) worker.promptStarted(e.data.prompt_id);
  });
  ext.on("provider.response_finished", (e) => {
    if (!e.replay) worker.responseFinished(e.data.prompt_id, e.data.text);
  });
  ext.on("agent.outer_turn_finished", (e) => {
    if (!e.replay) worker.turnEnded(e.data.prompt_id, e.data.outcome);
  });
  ext.on("agent.prompt_failed", (e) => {
    if (!e.replay && e.data.prompt_id !== undefined) worker.turnEnded(e.data.prompt_id, `failed (${e.data.code})`);
  });
}
