// How saved sessions' ages and sizes read to people, for the CLI listing and the UI alike.

/** How long ago, in the largest whole unit: `now`, `42s`, `5m`, `3h`, `12d`. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 5) return "now";
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** The same as a phrase: `just now`, `42s ago`, `5m ago`. */
export function ageLabel(ms: number): string {
  const age = formatAge(ms);
  return age === "now" ? "just now" : `${age} ago`;
}

/** A byte count in the largest unit that keeps it at least 1: `812 B`, `4.2 KiB`, `31 MiB`. */
export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}
