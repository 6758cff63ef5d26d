// What the sandbox looks for in the project around each sandboxed command (SPEC-sandbox,
// "Created during a command"): before it, the credential files, protected names and git folders
// whose protection bubblewrap applies (it can only bind what exists, and tau makes no mount point in
// the project for what does not); after it, what the command created that those rules cover, which
// is moved out of the project into tau's state folder (never deleted).
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** How deep below the project root the default deny-write patterns are looked for. */
export const DENY_WRITE_SCAN_DEPTH = 3;
/** How deep below the project root git folders (nested repositories, bare ones) are looked for. */
export const GIT_SCAN_DEPTH = 6;
/** Most directory entries looked at in one scan (a huge tree is not walked whole around each command). */
export const SCAN_MAX_ENTRIES = 20_000;
/** File names that run code on the host, wherever they are: shell start-up files and the runtime's own list. */
export const PROTECTED_NAMES: readonly string[] = [
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshenv",
  ".zprofile",
  ".zshrc",
  ".zlogin",
  ".zlogout",
  ".gitconfig",
  ".gitmodules",
  ".ripgreprc",
  ".mcp.json",
];

/** Folders whose files editors and agents run (tasks, settings, launch configurations), wherever they are; the runtime denies them to commands too. */
export const PROTECTED_FOLDERS: readonly string[] = [".vscode", ".idea", ".claude/commands", ".claude/agents"];

/** A git folder's files that hold commands git runs, or name where they are: never the model's to write. */
export const GIT_CONTROL_FILES: readonly string[] = ["hooks", "config", "commondir"];

/** A name the default deny-write patterns (`.env*`, `*.pem`, `*.key`) cover. */
export function matchesDenyWrite(name: string): boolean {
  return name.startsWith(".env") || name.endsWith(".pem") || name.endsWith(".key");
}

/**
 * A path inside a git folder's control files: `hooks/…`, `config`, `commondir` of any `.git`
 * folder, nested repositories and submodule and worktree git folders (`.git/modules/*`,
 * `.git/worktrees/*`) included.
 */
export function isGitControlPath(path: string): boolean {
  return /\/\.git\/(?:(?:modules|worktrees)\/.+\/)?(?:hooks(?:\/|$)|config$|commondir$)/.test(path);
}

export interface ProjectScan {
  /** Existing files the default deny-write patterns name. */
  readonly credentials: ReadonlySet<string>;
  /** Existing protected names (PROTECTED_NAMES, PROTECTED_FOLDERS, to three levels) and the project's own `.git` file. */
  readonly protectedFound: ReadonlySet<string>;
  /** The `hooks` and `config` of found git folders that do not exist. */
  readonly missingControl: ReadonlySet<string>;
  /** Git folders: `.git` folders, bare repositories (HEAD, objects/, refs/), and those in `.git/modules` and `.git/worktrees`. */
  readonly gitDirs: ReadonlySet<string>;
  /** `.git` files (a worktree's or a submodule's pointer to its git folder), with their text. */
  readonly gitFiles: ReadonlyMap<string, string>;
  /** Each git folder's `commondir` file text (git reads config and hooks from the folder it names). */
  readonly commondirs: ReadonlyMap<string, string>;
  /** The entry limit was reached: what lies beyond was not looked at. */
  readonly truncated: boolean;
  /** Every entry walked (path, kind, a link's target) and each git folder's control files: what the runtime's wrap can depend on. */
  readonly listing: string;
}

function readSmall(path: string): string | undefined {
  try {
    const info = lstatSync(path);
    if (!info.isFile() || info.size > 4096) return info.isFile() ? "(large)" : undefined;
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function linkTarget(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return "?";
  }
}

/** Walks the project (never following a symbolic link, never into node_modules). */
export function scanProject(root: string): ProjectScan {
  const credentials = new Set<string>();
  const protectedFound = new Set<string>();
  const missingControl = new Set<string>();
  const gitDirs = new Set<string>();
  const gitFiles = new Map<string, string>();
  const commondirs = new Map<string, string>();
  const listing: string[] = [];
  let seen = 0;
  let truncated = false;
  const list = (dir: string): import("node:fs").Dirent[] | undefined => {
    try {
      return readdirSync(dir, { withFileTypes: true });
    } catch {
      return undefined;
    }
  };
  const addGitDir = (dir: string, entries: import("node:fs").Dirent[] | undefined): void => {
    gitDirs.add(dir);
    const present = ["HEAD", ...GIT_CONTROL_FILES].map((f) => existsSync(join(dir, f)));
    listing.push(`git ${dir} ${present.map((p) => (p ? "1" : "0")).join("")}`);
    if (!present[1]) missingControl.add(join(dir, "hooks"));
    if (!present[2]) missingControl.add(join(dir, "config"));
    const common = readSmall(join(dir, "commondir"));
    if (common !== undefined) commondirs.set(dir, common);
    // Submodules' and worktrees' git folders live inside this one, and nest (modules/a/modules/b).
    for (const e of entries ?? []) {
      if (!e.isDirectory() || (e.name !== "modules" && e.name !== "worktrees")) continue;
      const walkInner = (d: string, depth: number): void => {
        const inner = list(d);
        if (inner === undefined || depth > GIT_SCAN_DEPTH) return;
        if (inner.some((x) => x.name === "HEAD")) return addGitDir(d, inner);
        for (const x of inner) {
          if (++seen > SCAN_MAX_ENTRIES) return void (truncated = true);
          if (x.isDirectory()) walkInner(join(d, x.name), depth + 1);
        }
      };
      for (const x of list(join(dir, e.name)) ?? []) if (x.isDirectory()) walkInner(join(dir, e.name, x.name), 1);
    }
  };
  const walk = (dir: string, depth: number): void => {
    const entries = list(dir);
    if (entries === undefined) return;
    const names = new Set(entries.map((e) => e.name));
    // A bare repository (git finds one by HEAD, objects/ and refs/): its config and hooks are git's too.
    if (dir !== root && names.has("HEAD") && names.has("objects") && names.has("refs")) return addGitDir(dir, entries);
    for (const e of entries) {
      if (++seen > SCAN_MAX_ENTRIES) return void (truncated = true);
      const path = join(dir, e.name);
      listing.push(`${path} ${e.isDirectory() ? "d" : e.isSymbolicLink() ? `l ${linkTarget(path)}` : e.isFile() ? "f" : "o"}`);
      if (depth <= DENY_WRITE_SCAN_DEPTH && isProtectedName(path)) protectedFound.add(path);
      if (e.name === ".git") {
        if (e.isDirectory()) addGitDir(path, list(path));
        else if (e.isFile()) {
          gitFiles.set(path, readSmall(path) ?? "");
          // The project's own pointer stays one (there are no .git/hooks while it is a file); git rewrites nested ones.
          if (dir === root) protectedFound.add(path);
        }
        continue;
      }
      if (e.isDirectory()) {
        if (depth < GIT_SCAN_DEPTH && e.name !== "node_modules") walk(path, depth + 1);
      } else if (depth <= DENY_WRITE_SCAN_DEPTH && matchesDenyWrite(e.name)) credentials.add(path);
    }
  };
  walk(root, 1);
  return { credentials, protectedFound, missingControl, gitDirs, gitFiles, commondirs, truncated, listing: listing.join("\n") };
}

/** Whether a path's last component (or last two, `.claude/commands`) is a protected name. */
function isProtectedName(path: string): boolean {
  return PROTECTED_NAMES.some((n) => path.endsWith(`/${n}`)) || PROTECTED_FOLDERS.some((f) => path.endsWith(`/${f}`));
}

/**
 * The literal deny-write paths a scan adds, all of them there now: the credential files, the
 * protected names found, each git folder's hooks and config. What does not exist is not bound —
 * bubblewrap would make a mount point for it in the project — but watched (`unboundProtected`).
 */
export function scannedDenyWrite(scan: ProjectScan, includeCredentials: boolean): string[] {
  const out: string[] = [];
  if (includeCredentials) out.push(...scan.credentials);
  out.push(...scan.protectedFound);
  for (const dir of scan.gitDirs) for (const f of ["hooks", "config"]) if (!scan.missingControl.has(join(dir, f))) out.push(join(dir, f));
  return out;
}

/**
 * A protected path in the project that did not exist when a command started: what the command
 * makes of it is checked afterwards (`watchedFindings`) — a git folder's `hooks` keep their samples
 * only, its `config` only safe keys, anything else is moved out whole.
 */
export interface Watched {
  readonly path: string;
  readonly rule: "whole" | "hooks" | "config";
}

/**
 * The protected paths inside the project that do not exist (SPEC-sandbox, "Created during a
 * command"): the missing ones of `protectedPaths` (the policy's, tau's `.tau/` among them), the
 * protected names at the project's root, and the missing hooks and config of its git folders.
 */
export function unboundProtected(scan: ProjectScan, root: string, protectedPaths: readonly string[]): Watched[] {
  const out = new Map<string, Watched>();
  const add = (path: string, rule: Watched["rule"]): void => {
    if (!out.has(path) && !exists(path)) out.set(path, { path, rule });
  };
  for (const p of scan.missingControl) add(p, p.endsWith("/hooks") ? "hooks" : "config");
  for (const p of protectedPaths) {
    if (p === root || !p.startsWith(`${root}/`)) continue;
    const inGit = dirname(p).endsWith("/.git") || scan.gitDirs.has(dirname(p));
    add(p, inGit && p.endsWith("/hooks") ? "hooks" : inGit && p.endsWith("/config") ? "config" : "whole");
  }
  for (const n of [...PROTECTED_NAMES, ...PROTECTED_FOLDERS]) add(join(root, n), "whole");
  return [...out.values()];
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Configuration keys a git folder made during a command may hold (anything else can run a command or load another file). */
const SAFE_GIT_KEYS: readonly RegExp[] = [
  /^core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|precomposeunicode|symlinks|autocrlf|eol|safecrlf|sparsecheckout|sparsecheckoutcone)$/,
  /^remote\.[^\n]+\.(url|pushurl|fetch|tagopt|prune|mirror)$/,
  /^branch\.[^\n]+\.(remote|merge|rebase|pushremote)$/,
  /^submodule\.[^\n]+\.(url|active|branch)$/,
  /^extensions\.objectformat$/,
  /^user\.(name|email)$/,
  /^(pull\.rebase|pull\.ff|fetch\.prune|push\.default|init\.defaultbranch|gc\.auto)$/,
];

/** The keys of a git config file's text, lower-cased as git compares them (section.subsection.name). */
export function gitConfigKeys(text: string): string[] | undefined {
  const keys: string[] = [];
  let section: string | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const head = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/.exec(line);
    if (head !== null) {
      section = `${(head[1] as string).toLowerCase()}${head[2] !== undefined ? `.${head[2]}` : ""}`;
      if ((head[3] ?? "").trim() !== "" && !/^[#;]/.test((head[3] as string).trim())) return undefined;
      continue;
    }
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(=|$)/.exec(line);
    if (kv === null || section === undefined) return undefined; // not read as git would: treated as unsafe
    keys.push(`${section}.${(kv[1] as string).toLowerCase()}`);
  }
  return keys;
}

function safeGitConfig(text: string | undefined): boolean {
  if (text === undefined) return true;
  const keys = gitConfigKeys(text);
  return keys !== undefined && keys.every((k) => SAFE_GIT_KEYS.some((r) => r.test(k)));
}

export interface Finding {
  /** What was found, absolute. */
  readonly path: string;
  readonly why: string;
}

/** Non-sample hooks of a git folder's `hooks` and an unsafe `config`, as findings saying `whose`. */
function gitControlFindings(dir: string, whose: string, parts: { hooks: boolean; config: boolean }): Finding[] {
  const out: Finding[] = [];
  if (parts.hooks) {
    let hooks: string[] = [];
    try {
      hooks = readdirSync(join(dir, "hooks")).filter((n) => !n.endsWith(".sample"));
    } catch {
      // no hooks folder
    }
    for (const h of hooks) out.push({ path: join(dir, "hooks", h), why: `it is a hook of ${whose}, which git would run outside the sandbox` });
  }
  if (parts.config && !safeGitConfig(readSmall(join(dir, "config")))) {
    out.push({ path: join(dir, "config"), why: `it is the config of ${whose}, with settings that can run commands or load other files` });
  }
  return out;
}

/** What became of protected paths that did not exist before a command (see `unboundProtected`). */
export function watchedFindings(watched: readonly Watched[]): Finding[] {
  const out: Finding[] = [];
  for (const w of watched) {
    if (!exists(w.path)) continue;
    if (w.rule === "whole") out.push({ path: w.path, why: "it is a protected path (it runs code on the host, or configures tau or an editor), which a command may not create" });
    else out.push(...gitControlFindings(dirname(w.path), "a git folder whose " + (w.rule === "hooks" ? "hooks folder" : "config") + " the command created", { hooks: w.rule === "hooks", config: w.rule === "config" }));
  }
  return out;
}

/**
 * What a command created (between `before` and `after`) that the deny-write rules and the git
 * protection cover: new credential files (when the default patterns apply), hooks and unsafe
 * config of git folders it made, a `commondir` it wrote into any git folder, a new `.git` file
 * pointing anywhere but at a git folder already protected or checked here, and what it made of the
 * protected paths that did not exist before it (`watched`). Each path once.
 */
export function createdDuring(before: ProjectScan, after: ProjectScan, o: { credentials: boolean; watched?: readonly Watched[] }): Finding[] {
  const out: Finding[] = watchedFindings(o.watched ?? []);
  if (o.credentials) for (const c of after.credentials) if (!before.credentials.has(c)) out.push({ path: c, why: "the deny-write rule for .env*, *.pem and *.key covers files a command creates too" });
  for (const dir of after.gitDirs) {
    const common = after.commondirs.get(dir);
    // A worktree's git folder names the main one (`../..`): fine when that one was protected throughout.
    if (common !== undefined && before.commondirs.get(dir) !== common && !before.gitDirs.has(resolve(dir, common.trim()))) {
      out.push({ path: join(dir, "commondir"), why: "a git folder's commondir makes git read config and hooks from the folder it names" });
    }
    // An existing one's hooks and config were read-only during the command, or watched when missing.
    if (before.gitDirs.has(dir)) continue;
    out.push(...gitControlFindings(dir, "a git folder the command created", { hooks: true, config: true }));
  }
  for (const [file, text] of after.gitFiles) {
    if (before.gitFiles.get(file) === text) continue;
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
    const target = m === null ? undefined : resolve(dirname(file), m[1] as string);
    // A pointer to a git folder this scan knows is fine: that folder is protected or checked above.
    if (target !== undefined && after.gitDirs.has(target)) continue;
    out.push({ path: file, why: "it is a .git file pointing at a git folder the sandbox does not protect (git would read config and hooks from there)" });
  }
  // A path is moved once, whichever rules found it (a missing `.git/hooks` and the new `.git` around it).
  const seen = new Set<string>();
  return out.filter((f) => !seen.has(f.path) && seen.add(f.path) !== undefined);
}

/**
 * Moves each finding out of the project into `into` (kept, under its path relative to `root`);
 * the texts say where each went. Never deletes what it cannot move.
 */
export function quarantine(findings: readonly Finding[], root: string, into: string): string[] {
  const notes: string[] = [];
  for (const f of findings) {
    const dest = join(into, relative(root, f.path));
    try {
      mkdirSync(dirname(dest), { recursive: true, mode: 0o700 });
      try {
        renameSync(f.path, dest);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
        cpSync(f.path, dest, { recursive: true, verbatimSymlinks: true, errorOnExist: true });
        rmSync(f.path, { recursive: true, force: true });
      }
      notes.push(`[sandbox: moved ${f.path} out of the project to ${dest}: ${f.why}; the user can move it back]`);
    } catch (err) {
      notes.push(`[sandbox: ${f.path} should not have been written (${f.why}) and could not be moved away (${(err as Error).message}); the user should check it before using git or that file]`);
    }
  }
  return notes;
}
