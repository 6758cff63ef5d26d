// A sorted, depth-first directory walk shared by `grep` (its JS engine) and `find`.
// Entries of each folder are visited in name order (as `rg --sort path` does), symbolic links are
// not followed, `SKIPPED_DIRECTORY_NAMES` are never entered below the root, and `.gitignore`
// files found from the root downwards are honoured (a subset: `#` comments, `!` negation, a
// trailing `/` for folders only, a `/` inside anchoring to the file's folder, and the glob dialect
// of glob.ts). Parent folders' and global ignore files are not read.
import type { Dirent } from "node:fs";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { SKIPPED_DIRECTORY_NAMES } from "./limits.js";
import { throwIfCancelled } from "./errors.js";
import { globToRegExp } from "./glob.js";

interface IgnoreRule {
  negate: boolean;
  directoryOnly: boolean;
  anchored: boolean;
  regex: RegExp;
}

interface IgnoreFile {
  /** Relative folder of the `.gitignore` ("" for the root), with a trailing "/" when not empty. */
  base: string;
  rules: IgnoreRule[];
}

export function parseGitignore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split("\n")) {
    let line = raw.replace(/\r$/, "");
    if (line === "" || line.startsWith("#")) continue;
    line = line.replace(/(?<!\\)\s+$/, "");
    if (line === "") continue;
    let negate = false;
    if (line.startsWith("!")) {
      negate = true;
      line = line.slice(1);
    } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
      line = line.slice(1);
    }
    let directoryOnly = false;
    if (line.endsWith("/")) {
      directoryOnly = true;
      line = line.replace(/\/+$/, "");
    }
    if (line === "") continue;
    const anchored = line.includes("/");
    try {
      rules.push({ negate, directoryOnly, anchored, regex: globToRegExp(anchored ? line.replace(/^\//, "") : line) });
    } catch {
      // An unparsable line ignores nothing.
    }
  }
  return rules;
}

/** Whether `relative` (from the walk root) is ignored by the stack of `.gitignore` files. */
function ignoredBy(stack: readonly IgnoreFile[], relative: string, name: string, isDirectory: boolean): boolean {
  let ignored = false;
  for (const file of stack) {
    if (!relative.startsWith(file.base)) continue;
    const local = relative.slice(file.base.length);
    for (const rule of file.rules) {
      if (rule.directoryOnly && !isDirectory) continue;
      if (rule.regex.test(rule.anchored ? local : name)) ignored = !rule.negate;
    }
  }
  return ignored;
}

export interface WalkEntry {
  absolute: string;
  /** Path from the walk root, `/`-separated. */
  relative: string;
  name: string;
  isDirectory: boolean;
  /** A `.gitignore` rule excludes it. */
  gitignored: boolean;
}

export interface WalkOptions {
  signal: AbortSignal;
  /** Whether to enter a folder / yield a file; default: not gitignored. */
  accept?: (entry: WalkEntry) => boolean;
}

const defaultAccept = (entry: WalkEntry): boolean => !entry.gitignored;

/** Yields the accepted regular files under the folder `root`, in sorted depth-first order. */
export async function* walkFiles(root: string, options: WalkOptions): AsyncGenerator<WalkEntry> {
  const accept = options.accept ?? defaultAccept;
  async function* visit(folder: string, relative: string, stack: readonly IgnoreFile[]): AsyncGenerator<WalkEntry> {
    throwIfCancelled(options.signal);
    let entries: Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      return; // unreadable folders are skipped, as ripgrep does
    }
    let here = stack;
    if (entries.some((entry) => entry.name === ".gitignore" && entry.isFile())) {
      const text = await readFile(join(folder, ".gitignore"), "utf8").catch(() => "");
      here = [...stack, { base: relative === "" ? "" : `${relative}/`, rules: parseGitignore(text) }];
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const isDirectory = entry.isDirectory();
      if (!isDirectory && !entry.isFile()) continue; // links, sockets, fifos, devices
      if (isDirectory && SKIPPED_DIRECTORY_NAMES.includes(entry.name)) continue;
      const childRelative = relative === "" ? entry.name : `${relative}/${entry.name}`;
      const walkEntry: WalkEntry = {
        absolute: join(folder, entry.name),
        relative: childRelative,
        name: entry.name,
        isDirectory,
        gitignored: ignoredBy(here, childRelative, entry.name, isDirectory),
      };
      if (!accept(walkEntry)) continue;
      if (isDirectory) yield* visit(walkEntry.absolute, childRelative, here);
      else yield walkEntry;
    }
  }
  yield* visit(root, "", []);
}
