// The HTML libraries of `web_fetch` (DECISION-web-html), as one bundle of their own
// (dist/fast/web-html.cjs): html.ts loads it on the first HTML page, so the web extension's own
// bundle stays small and its start never parses them.
export { parseHTML } from "linkedom";
export { Readability } from "@mozilla/readability";
export { default as TurndownService } from "turndown";
