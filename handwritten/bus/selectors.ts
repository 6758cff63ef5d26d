// Selectors name events exactly (`tool.result`), by family (`tool.*`), or all (`*`).

export type SelectorKind = "exact" | "prefix" | "all";

export function selectorKind(selector: string): SelectorKind {
  if (selector === "*") return "all";
  return selector.endsWith(".*") ? "prefix" : "exact";
}

export function selectorMatches(selector: string, event: string): boolean {
  switch (selectorKind(selector)) {
    case "all":
      return true;
    case "prefix":
      return event.startsWith(selector.slice(0, -1));
    case "exact":
      return selector === event;
  }
}

/** The most specific kind among the selectors that match `event`, or undefined when none does. */
export function bestMatch(selectors: readonly string[], event: string): SelectorKind | undefined {
  let best: SelectorKind | undefined;
  for (const s of selectors) {
    if (!selectorMatches(s, event)) continue;
    const k = selectorKind(s);
    if (k === "exact") return k;
    if (k === "prefix" || best === undefined) best = k;
  }
  return best;
}
