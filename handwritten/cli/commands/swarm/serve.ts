// `tau swarm serve`: the minimal coordinator (SPEC-swarm, "Coordinator"). Commands on standard
// input, one a line; one JSON line per happening on standard output.
import { createInterface } from "node:readline";
import { Command, Flags } from "@oclif/core";
import type { SwarmServeLine } from "../../../../generated/index.js";
import { SwarmCoordinator, bindEndpoint, keyProblem, type AdmittedWorker } from "../../../swarm/index.js";
import { EXIT_OK, TauError, errorOptions } from "../../errors.js";
import { needSecret, statusFile, workerCredentialSecret } from "./shared.js";

const WORKER = /^([a-z][a-z0-9_-]{0,31})=([0-9a-f]{64})$/;
/** The longest input line taken (a prompt's text included). */
const MAX_LINE_CHARS = 1024 * 1024;

function admitted(list: readonly string[]): AdmittedWorker[] {
  const out: AdmittedWorker[] = [];
  for (const item of list) {
    const m = WORKER.exec(item);
    if (m === null) throw new TauError("TAU-E0201", `--worker ${JSON.stringify(item.slice(0, 80))}: give it as NAME=ENDPOINT_ID (64 hex digits; tau swarm key prints a worker's)`);
    const [, name = "", endpointId = ""] = m;
    if (out.some((w) => w.name === name || w.endpointId === endpointId)) throw new TauError("TAU-E0201", `--worker ${name}: a worker name or endpoint id is given twice`);
    out.push({ name, endpointId, credential: needSecret(workerCredentialSecret(name), `tau swarm credential ${name}`) });
  }
  return out;
}

export default class SwarmServe extends Command {
  static override summary = "Coordinate swarm workers: admit the pinned ones, send them prompts and answers, report their results and questions.";
  static override description =
    "Standard input takes `prompt NAME TEXT` and `answer NAME BLOCKER_ID TEXT`, one a line; standard output has one JSON object a line " +
    "(ready, admitted, refused_peer, dispatched, update, fenced, disconnected, error); it ends when standard input ends. Only the workers given with --worker are admitted, each with " +
    "the credential in its secret swarm-worker-NAME. `tau swarm status` shows the workers while it runs.";
  static override examples = ["<%= config.bin %> swarm serve --bind 0.0.0.0:7420 --worker w1=ENDPOINT_ID --worker w2=ENDPOINT_ID"];
  static override flags = {
    worker: Flags.string({ description: "NAME=ENDPOINT_ID of a worker to admit; repeat for more.", multiple: true, required: true }),
    key: Flags.string({ description: "The secret holding the coordinator's endpoint key (tau swarm key NAME writes one).", default: "swarm-coordinator" }),
    bind: Flags.string({ description: "HOST:PORT to listen on (an ephemeral port on every address when absent)." }),
    relay: Flags.string({ description: "A relay server URL to be reachable through as well; relays are off without it." }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(SwarmServe);
    try {
      const workers = admitted(flags.worker);
      const key = needSecret(flags.key, `tau swarm key ${flags.key}`);
      const problem = keyProblem(key);
      if (problem !== undefined) throw new TauError("TAU-E0201", `secret ${flags.key} ${problem}`);
      const endpoint = await bindEndpoint({ key, accept: true, ...(flags.bind !== undefined ? { bind: flags.bind } : {}), ...(flags.relay !== undefined ? { relayUrl: flags.relay } : {}) });
      const print = (line: SwarmServeLine): void => void process.stdout.write(`${JSON.stringify(line)}\n`);
      const coordinator = new SwarmCoordinator(endpoint, workers, print, statusFile());
      print({ kind: "ready", endpoint_id: endpoint.id().toString(), addresses: endpoint.boundSockets() });
      this.readCommands(coordinator, print, () => void endpoint.close());
      for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void endpoint.close().finally(() => process.exit(EXIT_OK)));
      await coordinator.serve();
    } catch (err) {
      if (err instanceof TauError) this.error(err.message, errorOptions(err));
      throw err;
    }
  }

  private readCommands(coordinator: SwarmCoordinator, print: (line: SwarmServeLine) => void, done: () => void): void {
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    lines.on("line", (line) => {
      if (line.trim() === "") return;
      if (line.length > MAX_LINE_CHARS) return print({ kind: "error", message: `an input line is longer than ${MAX_LINE_CHARS} characters; it was ignored` });
      const prompt = /^prompt ([a-z][a-z0-9_-]{0,31}) (.+)$/s.exec(line);
      const answer = /^answer ([a-z][a-z0-9_-]{0,31}) (b[0-9a-f]{16}) (.+)$/s.exec(line);
      if (prompt !== null) void coordinator.dispatch(prompt[1] as string, prompt[2] as string);
      else if (answer !== null) void coordinator.dispatch(answer[1] as string, answer[3] as string, answer[2] as string);
      else print({ kind: "error", message: "an input line is neither `prompt NAME TEXT` nor `answer NAME BLOCKER_ID TEXT`" });
    });
    lines.on("close", done);
  }
}
