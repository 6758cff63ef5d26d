// A sorted, depth-first directory walk shared by `grep` (its JS engine) and `find`.
// Entries of each folder are visited in name order (as `rg --sort path` does), symbolic links are
// not followed, `SKIPPED_DIRECTORY_NAMES` are never entered below the root, and `.gitignore`
// files found from the root downwards are honoured (a subset: `#` comments, `!` negation, a
// trailing `/` for folders only, a `/` inside anchoring to the file's folder, and the glob dialect
// of glob.ts). Parent folders' and global ignore files are not read.
import type { Dirent } from "node:fs";
import { join } from "node:path";
import { SKIPPED_DIRECTORY_NAMES } from "./limits.js";
import { throwIfCancelled } from "./errors.js";
import { globToRegExp } from "./glob.js";
import { opener, type Landed } from "./landing.js";
import type { FileAccess } from "./types.js";

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
  /** Where it really is (the opened folder's real path and its name). */
  real: string;
  /** Its folder, open while the entry is being handled: open the entry through it (`Opener.openChild`). */
  folder: Landed;
}

export interface WalkOptions {
  signal: AbortSignal;
  /** Whether to enter a folder / yield a file; default: not gitignored. */
  accept?: (entry: WalkEntry) => boolean;
  /** The policy: a file it denies reading is never yielded (folders are still walked, for files re-allowed in them). */
  access?: FileAccess;
}

const defaultAccept = (entry: WalkEntry): boolean => !entry.gitignored;

/** The text of `.gitignore` in an open folder (never through a link); "" when there is none. */
async function readIgnoreFile(folder: Landed): Promise<string> {
  const file = await opener().openChild(folder, ".gitignore", "file");
  if (file === undefined) return "";
  try {
    return (await file.handle.stat()).isFile() ? await file.handle.readFile("utf8") : "";
  } catch {
    return "";
  } finally {
    await file.handle.close();
  }
}

/**
 * Yields the accepted regular files under the folder `root`, in sorted depth-first order. Each
 * folder is opened once and what is below it is reached through it without following a link, so
 * a folder swapped for a link while the walk runs cannot lead it elsewhere.
 */
export async function* walkFiles(root: string, options: WalkOptions): AsyncGenerator<WalkEntry> {
  const accept = options.accept ?? defaultAccept;
  const open = opener();
  async function* visit(folder: Landed, absolute: string, relative: string, stack: readonly IgnoreFile[]): AsyncGenerator<WalkEntry> {
    throwIfCancelled(options.signal);
    let entries: Dirent[];
    try {
      entries = await open.list(folder);
    } catch {
      return; // unreadable folders are skipped, as ripgrep does
    }
    let here = stack;
    if (entries.some((entry) => entry.name === ".gitignore" && entry.isFile())) {
      here = [...stack, { base: relative === "" ? "" : `${relative}/`, rules: parseGitignore(await readIgnoreFile(folder)) }];
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const isDirectory = entry.isDirectory();
      if (!isDirectory && !entry.isFile()) continue; // links, sockets, fifos, devices
      if (isDirectory && SKIPPED_DIRECTORY_NAMES.includes(entry.name)) continue;
      const childRelative = relative === "" ? entry.name : `${relative}/${entry.name}`;
      const walkEntry: WalkEntry = {
        absolute: join(absolute, entry.name),
        relative: childRelative,
        name: entry.name,
        isDirectory,
        gitignored: ignoredBy(here, childRelative, entry.name, isDirectory),
        real: join(folder.real, entry.name),
        folder,
      };
      if (!accept(walkEntry)) continue;
      if (!isDirectory) {
        if (options.access?.readRefusal(walkEntry.real) === undefined) yield walkEntry;
        continue;
      }
      const child = await open.openChild(folder, entry.name, "folder");
      if (child === undefined) continue; // gone, or swapped for a link meanwhile
      try {
        yield* visit(child, walkEntry.absolute, childRelative, here);
      } finally {
        await child.handle.close();
      }
    }
  }
  let top: Landed;
  try {
    top = await open.openFolder(root);
  } catch {
    return;
  }
  try {
    yield* visit(top, root, "", []);
  } finally {
    await top.handle.close();
  }
}
