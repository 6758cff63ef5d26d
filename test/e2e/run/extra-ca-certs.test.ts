// NODE_EXTRA_CA_CERTS through the real `tau` command (run as a shell runs it, through its `#!` line):
// tau's own processes start with it deferred, the provider still trusts its certificates over https,
// and a shell command sees the user's variable unchanged.
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replayJournal, validateJournalRecord, type JournalRecord } from "../../../handwritten/store/index.js";
import { useCleanups, workspaceIn } from "../../support/e2e.js";
import { FakeOpenAI, textResponse, toolCallResponse } from "../../support/fake-openai.js";
import { runTau } from "../../support/run-tau.js";
import { selfSignedCertificate, type SelfSigned } from "../../support/tls.js";

const cleanups = useCleanups();
let tls!: SelfSigned;
let certFile = "";
let fake!: FakeOpenAI;

beforeAll(async () => {
  tls = selfSignedCertificate();
  certFile = tls.certFile;
  fake = await FakeOpenAI.start({ tls });
});
afterAll(async () => {
  await fake?.close();
  tls?.dispose();
});

// Run by the shell tool: for the `tau run` client, its daemon and the daemon's children (the
// extensions), the role and how many NODE_EXTRA_CA_CERTS /
// TAU_NODE_EXTRA_CA_CERTS their node started with; then the variable as this command sees it.
const PROBE = `
role() { tr '\\0' ' ' < /proc/$1/cmdline | cut -d' ' -f3-4 | sed 's/ --.*//'; }
count() { tr '\\0' '\\n' < /proc/$1/environ | grep -c "^$2=" || true; }
ext=$PPID
daemon=$(cut -d' ' -f4 /proc/$ext/stat)
client=$(cut -d' ' -f4 /proc/$daemon/stat)
for p in $client $daemon $(ps -o pid= --ppid "$daemon"); do
  echo "$(role "$p"): node=$(count "$p" NODE_EXTRA_CA_CERTS) deferred=$(count "$p" TAU_NODE_EXTRA_CA_CERTS)"
done | sort
echo "command sees: \${NODE_EXTRA_CA_CERTS-unset} \${TAU_NODE_EXTRA_CA_CERTS-unset}"
`;

describe("NODE_EXTRA_CA_CERTS", () => {
  it("[run.extra-ca-certs.deferred] tau's processes start without it, the provider trusts it over https, commands see it unchanged", async () => {
    const { env, home, project } = workspaceIn(cleanups);
    writeFileSync(join(project, "probe.sh"), PROBE);
    fake.enqueue(toolCallResponse([{ id: "call_probe", name: "shell", arguments: JSON.stringify({ command: "sh probe.sh" }) }]), textResponse("Probed."));
    // The probe reads tau's own /proc entries: only an unsandboxed command sees them (SPEC-sandbox).
    const r = await runTau(["run", "-p", "probe", "--no-sandbox"], {
      env: { ...env, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: "k", OPENAI_MODEL: "fake-model", NODE_EXTRA_CA_CERTS: certFile },
      cwd: project,
      asCommand: true,
    });
    expect(r.stderr).toBe("[shell ok] sh probe.sh\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Probed.\n");
    expect(fake.baseUrl.startsWith("https://")).toBe(true);

    const agents = join(home, "state", "agents");
    const [agent] = readdirSync(agents);
    const journal = replayJournal<JournalRecord>(join(agents, agent as string, "events.cbor"), { validate: validateJournalRecord }).records;
    const result = journal.find((x) => x.event.name === "provider.tool_result");
    // The result's first line tells the model the sandbox is not in use; the probe's lines follow.
    expect(String(result?.event.data.output).trim().split("\n").slice(1)).toEqual([
      "daemon: node=0 deferred=1",
      "ext provider: node=0 deferred=1",
      "ext shell: node=0 deferred=1",
      "run -p: node=0 deferred=1",
      `command sees: ${certFile} unset`,
      "[exit code 0]",
    ]);
  });
});
