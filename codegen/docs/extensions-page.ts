// The docs page "Writing an extension": the SDK's shape (connect, tools, ready), then what an
// extension may tell the agents of its session — prompt fragments, per-agent context and
// readiness, session readiness, discovery snapshots, starting agents — with the rules quoted from
// SPEC-extension-declarations.
import { esc } from "./html.js";
import { GUIDE_PAGES, para, recordSection, type GuideContext } from "./guide.js";

const pre = (lines: readonly string[]): string => `<pre><code>${lines.map((l) => esc(l)).join("\n")}</code></pre>`;

export function extensionsPage(ctx: GuideContext): string {
  const page = GUIDE_PAGES.extensions;
  const p = (text: string): string => para(ctx, page, text);
  return [
    "<h1>Writing an extension</h1>",
    '<p class="lead">An extension is a program tau starts and talks to over its standard input and output: it can give the model tools, and tell the agents of its session what they should know. It is written with tau\'s extension SDK (<code>handwritten/sdk/</code>), listed under <code>extensions:</code> in <code>harness.yaml</code>, and trusted like any program you run.</p>',
    '<h2 id="shape">The shape of one</h2>',
    p("`Extension.connect()` says hello and waits for the configuration; everything it declares before `ready()` takes effect together when tau activates the session's extensions; `ready()` says it is set up. `examples/word-count/main.ts` is a whole one:"),
    pre([
      'import { Extension } from "../../handwritten/sdk/index.js"; // as examples/word-count/main.ts does',
      "",
      "const ext = await Extension.connect();",
      "ext.registerTool({ name: \"word_count\", description: \"Counts words.\", parameters: { type: \"object\" }, run: async (args) => ({ output: \"3 words\" }) });",
      'ext.declarePromptFragment("house-style", "Write commit messages in the imperative.");',
      "ext.ready();",
    ]),
    pre(["extensions:", "  - name: words", '    command: ["node", "--import", "tsx", "examples/word-count/main.ts"]', "    config: { unit: words }"]),
    '<h2 id="fragments">Prompt fragments: what every new agent is told</h2>',
    p("`ext.declarePromptFragment(key, text)` adds a fragment to the system prompt of every agent that initializes from then on; declaring the key again replaces it, `ext.withdrawPromptFragment(key)` removes it. An agent keeps the fragments it started with for as long as it lives in this process: a later declaration never rewrites what a running agent was told. The fragments go when your process does (a restarted process declares its own). At most 16 fragments and 32 KiB per extension; a declaration past that is refused with a warning and the others stay."),
    '<h2 id="agent-context">Context and readiness for one agent</h2>',
    p("An extension that knows something about a particular agent (the ticket it works on, a checkout it prepared) can hold that agent while it gets ready, and add keyed context to its system prompt. With `hold: true`, every agent that begins initializing after the declaration waits for you: its prompts are queued until you call `init.ready()` (or your process exits), with no time limit — call it whatever happens."),
    pre([
      "ext.onAgentInitializing(async (init) => {",
      "  // init.agentId, init.sessionId, init.initializationId; init.holding: whether this extension holds it",
      '  await init.context("ticket", await ticketFor(init.agentId));',
      "  await init.ready();",
      "}, { hold: true });",
    ]),
    p("Context is taken only while that initialization is pending, from your live process, for exactly the initialization id you were given: readiness for one agent never releases another. `ext.stopHoldingAgents()` stops holding agents that begin initializing later. At most 16 keys and 32 KiB per extension and agent. What an agent's initialization froze is recorded in its journal (`agent.initialization_context_set`), and a UI attaching later sees it as `harness.agent_context_initialized`; a resumed agent initializes again, with a fresh id."),
    '<h2 id="session-ready">Holding the session until you are ready</h2>',
    p("An extension whose declarations every agent should start with (its AGENTS.md files and skills, its fragments) can hold the session: no agent of it finishes initializing — prompts typed meanwhile are queued, not refused — until you call `init.ready()` or your process exits, with no time limit. The session begins once tau's first extensions have all started, when a daemon starts a new session, resumes one, or takes over from a handoff; only the extensions that declared `hold: true` while starting hold it, and one started later does not."),
    pre([
      "ext.onSessionInitializing(async (init) => {",
      "  // init.sessionId, init.initializationId; init.holding: whether this extension holds it",
      "  await ext.declareDiscoverySnapshot(await loadKnowledgeBase());",
      "  await init.ready();",
      "}, { hold: true });",
    ]),
    p("Readiness counts only from your live process and for exactly the initialization id you were given. It is separate from holding agents: `init.ready()` for the session never releases an agent you hold with `onAgentInitializing`, and readiness for an agent never releases the session. UIs see the state as `session.initialization_started`, then `session.initialized`; one attaching later receives the current one."),
    '<h2 id="discovery">AGENTS.md files and skills</h2>',
    p("`ext.declareDiscoverySnapshot({agentsMd, skills})` contributes AGENTS.md files (a path that says where each stands for, and its content) and skills (a name, a one-line description and the path of its SKILL.md, read when the skill is loaded) to every agent that initializes from then on, after the local ones. Each call replaces, whole, everything your extension contributed before; an empty snapshot withdraws it all, and so does your process's exit. At most 256 items and 1 MiB of text; an AGENTS.md holds at most 64 KiB. An invalid item (a relative path, a bad skill name, a duplicate) is reported in one warning and left out; the rest is taken. UIs see the result as `harness.session_skills_available`. For one agent alone, call `init.discovery({agentsMd, skills})` while you hold its initialization: those are added to what that agent took when it was created."),
    pre([
      "ext.declareDiscoverySnapshot({",
      '  agentsMd: [{ path: "/srv/kb/team/AGENTS.md", text: teamRules }],',
      '  skills: [{ name: "deploy", description: "Deploy the service", path: "/srv/kb/skills/deploy/SKILL.md" }],',
      "});",
    ]),
    '<h2 id="start-agent">Starting an agent</h2>',
    p("`await ext.startAgent({ role, parentId, displayName })` starts an agent in the session and resolves with its id: `role` must be one of `roles` in `harness.yaml`, `parentId` a loaded agent (the new one inherits its model). A refusal rejects with the reason. Asking again with the same request id (after a restart of your process, say) answers the agent it started instead of starting another. Give it work with `agent.internal_prompt_request`."),
    '<h2 id="placement">Where they appear</h2>',
    p("The default system prompt template ends with `{{fragments}}` and `{{agent_context}}`. A custom template (`system_prompt_template` in `harness.yaml`) places them where it puts those placeholders; one without them shows neither. `tau dev print-system-prompt` shows what a new agent would be told."),
    '<h2 id="rules">The rules tau follows</h2>',
    recordSection(ctx, page, "SPEC-extension-declarations", "Prompt fragments"),
    recordSection(ctx, page, "SPEC-extension-declarations", "Per-agent keyed context and readiness"),
    recordSection(ctx, page, "SPEC-extension-declarations", "Session readiness"),
    recordSection(ctx, page, "SPEC-extension-declarations", "Discovery snapshots"),
    recordSection(ctx, page, "SPEC-extension-declarations", "Start-agent requests"),
  ].join("\n");
}
