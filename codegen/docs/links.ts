// Verifies, before anything is written, that every internal href and src of the generated site
// points at a page that exists and, when it carries a fragment, at an id on that page.
import { posix } from "node:path";

export interface LinkProblem {
  page: string;
  detail: string;
}

function unescape(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

export function idsOf(html: string): Set<string> {
  return new Set([...html.matchAll(/\sid="([^"]*)"/g)].map((m) => unescape(m[1] ?? "")));
}

export function checkLinks(files: ReadonlyMap<string, string>): LinkProblem[] {
  const problems: LinkProblem[] = [];
  const ids = new Map<string, Set<string>>();
  for (const [page, content] of files) if (page.endsWith(".html")) ids.set(page, idsOf(content));
  for (const [page, content] of files) {
    if (!page.endsWith(".html")) continue;
    for (const m of content.matchAll(/\s(?:href|src)="([^"]*)"/g)) {
      const target = unescape(m[1] ?? "");
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
        if (/^(?:https?|mailto):/i.test(target) || target === "data:,") continue;
        problems.push({ page, detail: `link to ${target} uses a scheme the site does not allow` });
        continue;
      }
      const hash = target.indexOf("#");
      const path = hash === -1 ? target : target.slice(0, hash);
      const frag = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const resolved = path === "" ? page : posix.normalize(posix.join(posix.dirname(page), path));
      if (!files.has(resolved)) {
        problems.push({ page, detail: `link to ${target} names no page of the site` });
        continue;
      }
      if (frag !== undefined && frag !== "" && !(ids.get(resolved)?.has(frag) ?? false)) {
        problems.push({ page, detail: `link to ${target} names no anchor on ${resolved}` });
      }
    }
  }
  return problems;
}
