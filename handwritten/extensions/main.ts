// `tau ext <name>`: the first-party extensions, started by the harness through bin/tau.cjs.
import { EXIT_CODES } from "../startup/exit-codes.js";

const EXTENSIONS: Record<string, () => Promise<{ main(): Promise<void> }>> = {
  "test-dummy": () => import("./test-dummy/main.js"),
  shell: () => import("./shell/main.js"),
  provider: () => import("./provider/main.js"),
  handoff: () => import("./handoff/main.js"),
  mcp: () => import("./mcp/main.js"),
  slack: () => import("./slack/main.js"),
  web: () => import("./web/main.js"),
  gmail: () => import("./gmail/main.js"),
  swarm: () => import("./swarm/main.js"),
};

export async function main(argv: readonly string[]): Promise<void> {
  const name = argv[0];
  const load = name === undefined ? undefined : EXTENSIONS[name];
  if (!load) {
    process.stderr.write(`tau ext: unknown extension ${JSON.stringify(name ?? "")}; known: ${Object.keys(EXTENSIONS).sort().join(", ")}\n`);
    process.exitCode = EXIT_CODES.usage;
    return;
  }
  await (await load()).main();
}
