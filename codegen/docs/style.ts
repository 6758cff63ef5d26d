// The site's one stylesheet: system fonts only, no external resources.
export const STYLE = `:root {
  --fg: #1d2330;
  --muted: #5d6677;
  --bg: #ffffff;
  --panel: #f5f7fa;
  --line: #dde2ea;
  --accent: #2856c9;
  --accent-soft: #e8eefc;
  --ok: #1b7a43;
  --ok-soft: #e3f4ea;
  --warn: #8a5a00;
  --warn-soft: #fbf0d9;
  --bad: #a4262c;
  --bad-soft: #fbe6e7;
  --mono: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace;
  --sans: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", sans-serif;
}
* { box-sizing: border-box; }
html { font-size: 16px; }
body { margin: 0; color: var(--fg); background: var(--bg); font-family: var(--sans); line-height: 1.55; }
a { color: var(--accent); text-decoration: none; }
a:hover, a:focus { text-decoration: underline; }
code, pre { font-family: var(--mono); font-size: 0.88em; }
code { background: var(--panel); border: 1px solid var(--line); border-radius: 4px; padding: 0 0.25em; }
a code { color: var(--accent); }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 0.75rem 1rem; overflow-x: auto; }
pre code { background: none; border: 0; padding: 0; }
pre.terminal { background: #1d2330; color: #e8ecf3; border-color: #1d2330; }
header.site { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 1.5rem; padding: 0.6rem 1.5rem; background: #1d2330; }
header.site .brand { color: #fff; font-weight: 700; font-size: 1.1rem; letter-spacing: 0.02em; }
header.site ul { display: flex; flex-wrap: wrap; gap: 0.25rem; list-style: none; margin: 0; padding: 0; }
header.site li a { display: block; color: #c9d2e3; padding: 0.25rem 0.6rem; border-radius: 4px; font-size: 0.95rem; }
header.site li a:hover { color: #fff; background: #2f384a; text-decoration: none; }
header.site li a[aria-current="page"] { color: #fff; background: var(--accent); }
main { max-width: 76rem; margin: 0 auto; padding: 1.5rem 1.5rem 3rem; }
main.wide { max-width: 110rem; }
footer.site { max-width: 76rem; margin: 0 auto; padding: 1rem 1.5rem 2rem; color: var(--muted); font-size: 0.85rem; border-top: 1px solid var(--line); }
h1 { font-size: 1.9rem; line-height: 1.2; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.35rem; margin: 2rem 0 0.75rem; padding-bottom: 0.25rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.1rem; margin: 1.5rem 0 0.5rem; }
p.lead { font-size: 1.05rem; color: #333b4a; max-width: 60rem; }
.muted { color: var(--muted); }
.crumbs { color: var(--muted); font-size: 0.9rem; margin: 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
table { border-collapse: collapse; margin: 0.75rem 0 1.25rem; font-size: 0.93rem; }
th, td { border: 1px solid var(--line); padding: 0.35rem 0.55rem; text-align: left; vertical-align: top; }
thead th { background: var(--panel); font-weight: 600; }
tbody tr:nth-child(even) { background: #fafbfc; }
table.md-table { display: block; overflow-x: auto; max-width: 100%; }
table.records, table.summary, table.fields, table.tests { width: 100%; }
table.fields { table-layout: fixed; }
table.fields th:nth-child(1) { width: 22%; }
table.fields th:nth-child(2) { width: 30%; }
table.fields th:nth-child(3) { width: 8rem; }
td.field { overflow-wrap: anywhere; }
td.field.depth-1 { padding-left: 1.6rem; }
td.field.depth-2 { padding-left: 2.7rem; }
td.field.depth-3 { padding-left: 3.8rem; }
td.field.depth-4 { padding-left: 4.9rem; }
td.req { white-space: nowrap; color: var(--muted); }
.constraint { color: var(--muted); font-size: 0.85em; }
ul.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); gap: 0.75rem; list-style: none; padding: 0; margin: 1.25rem 0 2rem; }
ul.cards a { display: flex; flex-direction: column; gap: 0.25rem; height: 100%; padding: 0.9rem 1rem; border: 1px solid var(--line); border-radius: 8px; background: var(--panel); color: var(--fg); }
ul.cards a:hover { border-color: var(--accent); background: var(--accent-soft); text-decoration: none; }
ul.cards strong { color: var(--accent); }
ul.cards span { color: var(--muted); font-size: 0.9rem; }
ul.inline { display: flex; flex-wrap: wrap; gap: 0.35rem 0.75rem; list-style: none; margin: 0; padding: 0; }
dl.meta, dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.3rem 1rem; margin: 0.5rem 0 1.25rem; padding: 0.75rem 1rem; background: var(--panel); border: 1px solid var(--line); border-radius: 6px; }
dl.meta dt, dl.facts dt { color: var(--muted); font-size: 0.9rem; }
dl.meta dd, dl.facts dd { margin: 0; }
dl.flags dt { margin-top: 0.5rem; }
dl.flags dd { margin-left: 1.5rem; }
dl.legend { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 0.75rem; font-size: 0.9rem; }
dl.legend dd { margin: 0; }
.badge { display: inline-block; padding: 0 0.5em; border-radius: 999px; font-size: 0.8rem; font-weight: 600; border: 1px solid transparent; }
.status-accepted, .status-enforced, .test-implemented { color: var(--ok); background: var(--ok-soft); border-color: #b9e0c8; }
.status-draft, .status-proposed, .test-todo { color: var(--warn); background: var(--warn-soft); border-color: #efd9a8; }
.status-superseded, .test-missing { color: var(--bad); background: var(--bad-soft); border-color: #f0c2c5; }
article.record { max-width: 60rem; }
blockquote { margin: 1rem 0; padding: 0.1rem 1rem; border-left: 4px solid var(--line); color: #333b4a; background: #fafbfc; }
article.record table { font-size: 0.9rem; }
.repo-path { font-family: var(--mono); font-size: 0.88em; }
section.entry { margin: 0 0 1.5rem; padding-top: 0.25rem; }
section.entry h3 { margin-top: 1.75rem; }
section.gate .rule { border-left: 4px solid var(--accent); background: var(--accent-soft); padding: 0.25rem 1rem; margin: 0.5rem 0 1rem; }
nav.toc ul { display: flex; flex-wrap: wrap; gap: 0.35rem 1rem; list-style: none; padding: 0; }
p.jump { line-height: 2; }
div.scroll { overflow-x: auto; }
table.matrix { font-size: 0.85rem; }
table.matrix thead th { position: sticky; top: 0; z-index: 1; }
table.matrix th.cls { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap; vertical-align: bottom; padding: 0.5rem 0.25rem; }
table.matrix th.cls code { background: none; border: 0; }
table.matrix tbody th { background: inherit; font-weight: normal; white-space: nowrap; }
table.matrix tr.family th { background: #e9edf4; font-weight: 700; text-transform: uppercase; letter-spacing: 0.05em; font-size: 0.8rem; }
table.matrix td.admit, table.matrix td.cap, table.matrix td.deny { text-align: center; min-width: 2rem; }
td.admit, dt.admit { color: var(--ok); background: var(--ok-soft); font-weight: 700; }
td.cap, dt.cap { color: var(--warn); background: var(--warn-soft); font-weight: 700; }
td.prot { color: var(--ok); }
td.unprot { color: var(--muted); }
td.succ a { margin-right: 0.3rem; white-space: nowrap; }
td.owner { white-space: nowrap; }
dl.legend dt { text-align: center; min-width: 2.5rem; border-radius: 4px; }
td.persist-transient, td.persist-directed { color: var(--muted); }
`;
