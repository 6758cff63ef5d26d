// The docs page "Setting up a Slack app for tau": the Slack side step by step, the tokens, the
// harness.yaml entry, then the rules quoted from SPEC-slack.
import { esc } from "./html.js";
import { GUIDE_PAGES, para, recordSection, type GuideContext } from "./guide.js";

const pre = (lines: readonly string[]): string => `<pre><code>${lines.map((l) => esc(l)).join("\n")}</code></pre>`;

export function slackPage(ctx: GuideContext): string {
  const page = GUIDE_PAGES.slack;
  const p = (text: string): string => para(ctx, page, text);
  return [
    "<h1>Setting up a Slack app for tau</h1>",
    '<p class="lead">The Slack bridge lets people talk to one tau agent from Slack: a message in a conversation and thread you configure, from a person you allow, reaches the agent, and the agent answers in that thread. It connects with Socket Mode, so tau needs no public address.</p>',
    '<h2 id="create">1. Create the app</h2>',
    p("At <https://api.slack.com/apps> choose **Create New App**, **From a manifest**, pick the workspace and paste this manifest (drop the scopes and events of conversation kinds you will not route; keep `reactions:write` only if you turn reactions on):"),
    pre([
      "display_information:",
      "  name: tau",
      "features:",
      "  bot_user: {display_name: tau, always_online: false}",
      "  app_home: {messages_tab_enabled: true, messages_tab_read_only_enabled: false}",
      "oauth_config:",
      "  scopes:",
      "    bot: [channels:history, groups:history, im:history, mpim:history, chat:write, users:read, reactions:write]",
      "settings:",
      "  event_subscriptions:",
      "    bot_events: [message.channels, message.groups, message.im, message.mpim]",
      "  socket_mode_enabled: true",
    ]),
    p("`users:read` lets tau check that each sender is a live human (`users.info`); `chat:write` is for the answers. The bridge never lists reactions, channels or members."),
    '<h2 id="tokens">2. Make the two tokens</h2>',
    p("**Basic Information → App-Level Tokens → Generate Token and Scopes**: add the scope `connections:write`; the token starts with `xapp-`. **Install App → Install to Workspace**: the **Bot User OAuth Token** starts with `xoxb-`."),
    p("Keep both as tau secrets, files readable only by you in the config root's `secrets` folder (`~/.config/tau/secrets/`), typed at a prompt so they stay out of your shell history:"),
    pre([
      "$ mkdir -p -m 700 ~/.config/tau/secrets",
      "$ (umask 077; read -rsp 'bot token: ' t && printf %s \"$t\" > ~/.config/tau/secrets/slack-bot-token)",
      "$ (umask 077; read -rsp 'app token: ' t && printf %s \"$t\" > ~/.config/tau/secrets/slack-app-token)",
    ]),
    p("Or set `TAU_SECRET_SLACK_BOT_TOKEN` and `TAU_SECRET_SLACK_APP_TOKEN` in the environment tau starts in. tau hands them to the Slack extension only, and never logs them."),
    '<h2 id="ids">3. Find the ids</h2>',
    p("tau admits by Slack's native ids, never by names. Invite the app to the channel (`/invite @tau`). The channel's id is at the bottom of its details (`C…`, or `G…` for an older private channel). A person's id: their profile, **⋮ → Copy member ID** (`U…` or `W…`). A thread's stamp: **Copy link** on its first message; the link ends in `p1712345678000100`, which is the stamp `1712345678.000100`."),
    '<h2 id="configure">4. Configure the bridge</h2>',
    p("Add the extension to `harness.yaml` (one instance per Slack app and receiving agent):"),
    pre([
      "extensions:",
      "  - name: slack",
      "    kind: tool",
      "    command: [tau, ext, slack]",
      "    secrets: [slack-bot-token, slack-app-token]",
      "    startup_timeout_seconds: 10",
      "    config:",
      "      team_id: T0123ABCD          # refuse a token of any other workspace",
      "      routes:",
      "        - alias: ops              # the only name the model sees",
      "          channel: C0123ABCD",
      "          kind: channel           # channel, group (private), im, mpim",
      '          thread_ts: "1712345678.000100"   # only this thread; leave out for top-level messages',
      "          users: [U0ALICE, U0BOB]",
      "        - {alias: announce, channel: C0456EFGH, kind: channel, receive: false, proactive: true}",
      "      direct_messages: {users: [U0ALICE], max_links: 4}",
      "      reactions: false",
    ]),
    p("Start tau and create an agent: the session's first top-level agent (of `agent_role`, if set) is the one the bridge serves. The session's `extensions.log` says `slack: connected (Socket Mode)` and `serving agent …`, and names every message it drops and why. Ask in the thread; the agent answers there with `slack_reply`."),
    '<h2 id="rules">What is admitted, and what the agent may do</h2>',
    recordSection(ctx, page, "SPEC-slack", "Admission"),
    recordSection(ctx, page, "SPEC-slack", "Reply authority"),
    recordSection(ctx, page, "SPEC-slack", "Tools"),
    p("`security_mode: lax` on a route admits any verified human in that exact conversation and thread: more people can put text in front of the agent, so more can try to steer it. Everyone in a conversation, its workspace's administrators and Slack Connect participants can read what the agent sends there."),
  ].join("\n");
}
