// The docs page "Gmail": the Google side (an OAuth client of the user's own), the harness.yaml
// entry, signing in from the terminal (here or on a remote machine), then the rules quoted from
// SPEC-gmail.
import { esc } from "./html.js";
import { GUIDE_PAGES, para, recordSection, type GuideContext } from "./guide.js";

const pre = (lines: readonly string[]): string => `<pre><code>${lines.map((l) => esc(l)).join("\n")}</code></pre>`;

export function gmailPage(ctx: GuideContext): string {
  const page = GUIDE_PAGES.gmail;
  const p = (text: string): string => para(ctx, page, text);
  return [
    "<h1>Gmail</h1>",
    '<p class="lead">Let the model search and read your mail and write drafts; it can send a draft only when you allow that send, each time. Mail reaches the model framed as untrusted content: what strangers wrote, not your instructions.</p>',
    '<h2 id="client">1. An OAuth client of your own</h2>',
    p("In the Google Cloud console, in a project of yours: enable the **Gmail API**, configure the OAuth consent screen (add yourself as a test user while the app is in testing), and create an OAuth client ID of type **Desktop app**. tau needs its client ID; if Google shows a client secret, keep it in a file only you can read:"),
    pre(["$ install -m 700 -d ~/.config/tau/secrets", "$ (umask 077; cat > ~/.config/tau/secrets/gmail-client-secret)   # paste it, then Ctrl-D"]),
    '<h2 id="enable">2. Turn it on</h2>',
    p("Add `gmail:` to `harness.yaml`:"),
    pre(["gmail:", "  client_id: 1234-abc.apps.googleusercontent.com"]),
    '<h2 id="signin">3. Sign in from the terminal</h2>',
    p("In the interactive UI type `:gmail login` and open the address it prints. After you allow tau, Google sends the browser back to a listener tau opened on this machine, and the sign-in finishes by itself (`:gmail status` says so)."),
    p("When tau runs on another machine (over ssh), the browser's last page will not load: copy that page's address from the address bar and type `:gmail code` followed by it. The address holds a one-time code: tau keeps it off the screen and out of your prompt history and logs, and hands it only to the Gmail extension. Type it with `:` (not `/`): a `/gmail` line typed before the Gmail extension has started is sent to the model as text, as any unknown `/` line is."),
    pre([":gmail login", ":gmail code http://127.0.0.1:41234/?state=…&code=4/0A…&scope=…", ":gmail status", ":gmail logout"]),
    recordSection(ctx, page, "SPEC-gmail", "Sign-in"),
    '<h2 id="tools">The tools, and sending</h2>',
    recordSection(ctx, page, "SPEC-gmail", "Tools"),
    '<h2 id="egress">Network</h2>',
    recordSection(ctx, page, "SPEC-gmail", "Egress"),
  ].join("\n");
}
