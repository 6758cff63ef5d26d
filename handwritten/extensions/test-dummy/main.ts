// `tau ext test-dummy` (disabled unless configured): a small extension for end-to-end tests.
// Its settings (TestDummySettings in spec/) choose tools and behaviours (a `group` and `tags` are
// declared with every tool). A driver turns custom events
// `extension.event {category: "test", name: "call", payload: {agent_id, call_id, tool, arguments}}`
// from a UI into `tool.request`s, so tests can route calls without a model; `name: "register"` or
// `"unregister"` with `payload: {tool}` declares or withdraws one of its test tools while it runs;
// `"fragments"` with `payload: {fragments: [{key, text}], exit?}` declares prompt fragments (a null
// text withdraws one), then, with `exit`, ends the process once they are sent; `"session_ready"`
// and `"session_wait"` drive session readiness (sessionOf below).
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { Extension, ToolFailure, type AgentInitialization, type SessionInitialization, type ToolDefinition } from "../../sdk/index.js";
import type { EventPayloads, TestDummyTool } from "../../../generated/index.js";

/** This process's connection, for the tools that publish. */
let connected: Extension | undefined;

const TOOLS: Record<TestDummyTool, ToolDefinition> = {
  echo: {
    name: "echo",
    description: "Returns its text argument.",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
    run: async (args) => ({ output: String((args as { text?: unknown }).text ?? "") }),
  },
  sleep: {
    name: "sleep",
    description: "Waits ms milliseconds; cancellable.",
    parameters: { type: "object", properties: { ms: { type: "integer", minimum: 0, maximum: 600000 } }, required: ["ms"], additionalProperties: false },
    run: (args, ctx) =>
      new Promise((resolve, reject) => {
        const t = setTimeout(() => resolve({ output: "slept" }), Number((args as { ms?: unknown }).ms ?? 0));
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(t);
          reject(new ToolFailure("cancelled"));
        });
      }),
  },
  progress: {
    name: "progress",
    description: "Reports three progress steps, then finishes.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    run: async (_args, ctx) => {
      for (let i = 1; i <= 3; i++) ctx.progress(`step ${i}`);
      return { output: "done", display: { summary: "three steps" } };
    },
  },
  crash: {
    name: "crash",
    description: "Exits the extension process in the middle of the call.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    run: () => {
      crash();
      return new Promise(() => {});
    },
  },
  env: {
    name: "env",
    description: "Lists the TAU_SECRET_* variable names this process can see (there should be none).",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    run: async () => ({ output: JSON.stringify(Object.keys(process.env).filter((k) => k.startsWith("TAU_SECRET_"))) }),
  },
  report: {
    name: "report",
    description: "Publishes agent.external_message_reported for agent_id with the publisher claim and text it is given.",
    parameters: {
      type: "object",
      properties: { agent_id: { type: "string" }, publisher: { type: "string" }, text: { type: "string" } },
      required: ["agent_id", "publisher", "text"],
      additionalProperties: false,
    },
    run: async (args) => {
      const a = args as { agent_id: string; publisher: string; text: string };
      await connected?.emit("agent.external_message_reported", { agent_id: a.agent_id, publisher: a.publisher, adapter: "slack", text: a.text });
      return { output: "reported" };
    },
  },
  notice: {
    name: "notice",
    description: "Says its text as an extension notice of its level, then returns.",
    parameters: {
      type: "object",
      properties: { level: { type: "string", enum: ["info", "warning", "error"] }, text: { type: "string" } },
      required: ["level", "text"],
      additionalProperties: false,
    },
    run: async (args) => {
      const a = args as { level: "info" | "warning" | "error"; text: string };
      connected?.notice(a.level, a.text);
      return { output: "said" };
    },
  },
  fail: {
    name: "fail",
    description: "Always fails.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    run: async () => {
      throw new ToolFailure("this tool always fails");
    },
  },
};

/** Exits 3 in a moment (what was sent is on its way), as a crashing extension would. */
function crash(): void {
  setTimeout(() => process.exit(3), 10);
}

export async function main(): Promise<void> {
  const ext = await Extension.connect();
  connected = ext;
  const cfg = ext.settings("test-dummy");
  if (cfg === undefined) return;
  const labels = { ...(cfg.group !== undefined ? { group: cfg.group } : {}), ...(cfg.tags !== undefined ? { tags: cfg.tags } : {}) };
  // Secrets arrive only in configure; say which names arrived, never their values.
  process.stderr.write(`test-dummy ${ext.instance}: configured with secrets ${JSON.stringify(Object.keys(ext.configuration.secrets))}\n`);
  if (cfg.config_error) return ext.configError(cfg.config_error);
  for (const name of cfg.tools ?? ["echo"]) ext.registerTool({ ...TOOLS[name], ...labels });
  // A sensitive colon command (SPEC-extension-commands): it answers with a digest of what reached
  // it raw, so a test can tell the code arrived whole without it being shown anywhere.
  ext.registerCommand({
    name: "dummy-secret",
    usage: ":dummy-secret CODE",
    summary: "hands CODE to the test-dummy extension only (a test of sensitive commands)",
    sensitive: true,
    run: (args) => ({ level: "info", text: `test-dummy received ${args.length} argument(s), sha256 ${createHash("sha256").update(args.join(" ")).digest("hex").slice(0, 16)}` }),
  });
  for (const f of cfg.fragments ?? []) void ext.declarePromptFragment(f.key, f.text);
  interceptKeys(ext, cfg.drop_keys ?? [], cfg.hold_keys ?? []);
  const initializations = initializationsOf(ext, cfg.hold_agents === true, cfg.agent_context ?? []);
  const session = sessionOf(ext, cfg.hold_session === true);
  if (cfg.never_ready) return;
  // A start gate: a file at `ready_gate` when it starts keeps it from becoming ready until the file is gone.
  const gate = cfg.ready_gate;
  if (gate !== undefined && existsSync(gate)) {
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (existsSync(gate)) return;
        clearInterval(timer);
        resolve();
      }, 20);
    });
  }
  if (cfg.driver) {
    ext.subscribe([], ["extension.event"]);
    ext.on("extension.event", (e) => {
      if (e.replay || e.data.category !== "test") return;
      // With several drivers, `payload.instance` names the one it is for.
      if (typeof e.data.payload.instance === "string" && e.data.payload.instance !== ext.instance) return;
      // A custom event's payload is free-form: the driver takes what it needs only when it is there.
      const { agent_id, call_id, tool, arguments: args } = e.data.payload;
      if (e.data.name === "register" && typeof tool === "string" && Object.hasOwn(TOOLS, tool)) return ext.registerTool({ ...TOOLS[tool as TestDummyTool], ...labels });
      if (e.data.name === "unregister" && typeof tool === "string") return ext.unregisterTool(tool);
      if (e.data.name === "fragments") return void declareFragments(ext, e.data.payload);
      if (e.data.name === "exit") return crash();
      if (e.data.name === "discovery") return void declareDiscovery(ext, e.data.payload);
      if (e.data.name === "start_agent") return void startAgent(ext, e.data.payload);
      if (e.data.name === "agent_context" || e.data.name === "agent_ready" || e.data.name === "agent_discovery") return void initializations.drive(e.data.name, e.data.payload);
      if (e.data.name === "session_ready" || e.data.name === "session_wait") return void session.drive(e.data.name, e.data.payload);
      if (e.data.name !== "call") return;
      if (typeof agent_id !== "string" || typeof call_id !== "string" || typeof tool !== "string") return;
      ext.emit("tool.request", { agent_id, call_id, tool, arguments_json: JSON.stringify(args ?? {}) });
    });
  }
  ext.ready();
}

/**
 * Drops fragment and context declarations of the `drop` keys; never answers about those of the
 * `hold` keys. A discovery snapshot counts as key `discovery`, a start-agent request as `start`,
 * a session readiness declaration as `session_ready` and a session wait as `session_wait`.
 */
function interceptKeys(ext: Extension, drop: readonly string[], hold: readonly string[]): void {
  if (drop.length === 0 && hold.length === 0) return;
  const named: Record<string, string> = { "extension.discovery_snapshot_declared": "discovery", "agent.start_request": "start", "session.readiness_declared": "session_ready", "session.readiness_wait_declared": "session_wait" };
  ext.intercept(["extension.prompt_fragment_declared", "agent.context_declared", ...Object.keys(named)], 0, (e) => {
    const key = named[e.name] ?? e.data.key;
    if (typeof key === "string" && hold.includes(key)) return new Promise<never>(() => {});
    return typeof key === "string" && drop.includes(key) ? { action: "drop" } : { action: "pass" };
  });
}

/**
 * The driver's `start_agent {role?, parent_id?, display_name?}`: through the SDK's startAgent; with a
 * `request_id` (and optionally a `session_id`), as that raw request, then `exit` if asked. Every
 * answer is told back as a custom event `start_result` whose payload is the answer.
 */
async function startAgent(ext: Extension, p: Record<string, unknown>): Promise<void> {
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  const fields = { role: text(p.role), parent_id: text(p.parent_id), display_name: text(p.display_name) };
  const given = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  const tell = (payload: Record<string, unknown>) => void ext.emit("extension.event", { category: "test", name: "start_result", payload: { tag: text(p.tag) ?? "", ...payload } });
  if (typeof p.request_id !== "string") {
    const o = { role: fields.role, parentId: fields.parent_id, displayName: fields.display_name };
    return ext.startAgent(Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))).then(
      (agent_id) => tell({ ok: true, agent_id }),
      (err: unknown) => tell({ ok: false, error: err instanceof Error ? err.message : String(err) }),
    );
  }
  ext.onDirect("agent.start_result", (r) => tell({ ...r }));
  await ext.emit("agent.start_request", { request_id: p.request_id, session_id: text(p.session_id) ?? ext.configuration.session_id, ...given });
  if (p.exit === true) crash();
}

/** The driver's `discovery` event: its `items` declared as one snapshot, as they are (invalid ones too); then, with `exit`, gone. */
async function declareDiscovery(ext: Extension, payload: Record<string, unknown>): Promise<void> {
  const items = Array.isArray(payload.items) ? payload.items : [];
  await ext.emit("extension.discovery_snapshot_declared", { items: items as EventPayloads["extension.discovery_snapshot_declared"]["items"] });
  if (payload.exit === true) crash();
}

/** The driver's `fragments` event: each `{key, text}` declared (null text: withdrawn), in order; then, with `exit`, gone. */
async function declareFragments(ext: Extension, payload: Record<string, unknown>): Promise<void> {
  const list = Array.isArray(payload.fragments) ? (payload.fragments as Array<{ key?: unknown; text?: unknown }>) : [];
  for (const f of list) {
    if (typeof f.key !== "string") continue;
    if (typeof f.text === "string") await ext.declarePromptFragment(f.key, f.text);
    else if (f.text === null) await ext.withdrawPromptFragment(f.key);
  }
  if (payload.exit === true) crash();
}

/**
 * Agents' initializations as test-dummy sees them: the configured context declared for each, and,
 * when it holds them, readiness only when the driver says so. The driver's `agent_context {agent_id,
 * key, text}`, `agent_discovery {agent_id, items}` and `agent_ready {agent_id}` act on the agent's last initialization, or on the
 * `initialization_id` / `session_id` they name (a stale one, say).
 */
function initializationsOf(ext: Extension, hold: boolean, context: ReadonlyArray<{ key: string; text: string }>) {
  const last = new Map<string, AgentInitialization>();
  ext.onAgentInitializing(
    (init) => {
      last.set(init.agentId, init);
      for (const c of context) void init.context(c.key, c.text);
    },
    { hold },
  );
  return {
    drive(name: "agent_context" | "agent_ready" | "agent_discovery", p: Record<string, unknown>): void {
      const init = typeof p.agent_id === "string" ? last.get(p.agent_id) : undefined;
      const agent_id = typeof p.agent_id === "string" ? p.agent_id : "";
      const ids = {
        agent_id,
        session_id: typeof p.session_id === "string" ? p.session_id : (init?.sessionId ?? ext.configuration.session_id),
        initialization_id: typeof p.initialization_id === "string" ? p.initialization_id : (init?.initializationId ?? "init-none"),
      };
      if (name === "agent_ready") void ext.emit("agent.readiness_declared", ids);
      else if (name === "agent_discovery") void ext.emit("agent.discovery_snapshot_declared", { ...ids, items: (Array.isArray(p.items) ? p.items : []) as EventPayloads["agent.discovery_snapshot_declared"]["items"] });
      else void ext.emit("agent.context_declared", { ...ids, key: String(p.key), text: typeof p.text === "string" ? p.text : null });
    },
  };
}

/**
 * The session's initialization as test-dummy sees it (held when `hold`). The driver's
 * `session_ready {session_id?, initialization_id?}` declares readiness for the one it saw, or for
 * the ids it names (a stale one, say); `session_wait {wait?}` declares a wait (default true) now;
 * with `exit`, either ends the process once it is sent.
 */
function sessionOf(ext: Extension, hold: boolean) {
  let seen: SessionInitialization | undefined;
  ext.onSessionInitializing((init) => (seen = init), { hold });
  return {
    async drive(name: "session_ready" | "session_wait", p: Record<string, unknown>): Promise<void> {
      if (name === "session_wait") {
        await ext.emit("session.readiness_wait_declared", { wait: p.wait !== false });
        if (p.exit === true) crash();
        return;
      }
      const session_id = typeof p.session_id === "string" ? p.session_id : (seen?.sessionId ?? ext.configuration.session_id);
      const initialization_id = typeof p.initialization_id === "string" ? p.initialization_id : (seen?.initializationId ?? "init-none");
      await ext.emit("session.readiness_declared", { session_id, initialization_id });
      if (p.exit === true) crash();
    },
  };
}
