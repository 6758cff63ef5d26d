// The file tools under the sandbox's one filesystem policy (SPEC-sandbox, "Scope"): what `read`,
// `grep`, `find` and `ls` may read and where `write` and `edit` may write, judged on where a path
// really is. The policy is the sandbox's own (sandbox.yaml and the session's grants), so a grant
// counts for commands and tools alike. A few small looks at the disk tell a git folder by its shape.
import { readdirSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { realTarget } from "./denials.js";
import { DENY_WRITE_SCAN_DEPTH, PROTECTED_FOLDERS, PROTECTED_NAMES, matchesDenyWrite } from "./project-scan.js";
import { within, type EffectivePolicy } from "./policy.js";

/**
 * How much of the policy applies: `full` while the sandbox is in force (or blocked), `protected`
 * when the user turned it off (`--no-sandbox`, `enabled: false`, `:sandbox off`): the tools then
 * have the user's rights except for the protected paths.
 */
export type Enforcement = "full" | "protected";

/** A git folder's files and folders that run commands or name other files git reads. */
const GIT_CONTROL_FILES = new Set(["config", "config.worktree", "commondir"]);
const GIT_CONTROL_FOLDERS = new Set(["hooks", "info"]);

export type WriteVerdict = { readonly kind: "ok" } | { readonly kind: "refused"; readonly why: string } | { readonly kind: "ask"; readonly grant: string };

interface Rule {
  /** The entry as configured (shown in messages). */
  readonly shown: string;
  readonly covers: (path: string) => boolean;
}

/** The policy prepared for the file tools: every entry resolved to where it really is. */
export interface FileRules {
  readonly enforcement: Enforcement;
  readonly projectRoot: string;
  readonly denyRead: readonly Rule[];
  readonly allowRead: readonly Rule[];
  readonly allowWrite: readonly Rule[];
  readonly denyWrite: readonly Rule[];
  readonly defaultDenyWrite: boolean;
  readonly protected: readonly Rule[];
}

const caseless = process.platform === "darwin";
const fold = (s: string): string => (caseless ? s.toLowerCase() : s);

/** A glob entry (`*`, `?`, `[…]`, `**`) as a regular expression that also covers everything below a match. */
function globRule(pattern: string): RegExp {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === "*") {
      const double = pattern[i + 1] === "*";
      if (double && pattern[i + 2] === "/") {
        re += "(?:.*/)?";
        i += 2;
      } else if (double) {
        re += ".*";
        i += 1;
      } else re += "[^/]*";
    } else if (c === "?") re += "[^/]";
    else if (c === "[" && pattern.indexOf("]", i + 2) !== -1) {
      const end = pattern.indexOf("]", i + 2);
      re += `[${pattern.slice(i + 1, end).replace(/[\\\]^]/g, "\\$&")}]`;
      i = end;
    } else re += c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}(?:/.*)?$`, caseless ? "i" : "");
}

const GLOB = /[*?[]/;

/** An entry of the policy, resolved where it really is: its literal head's links followed. */
function rule(entry: string): Rule {
  const at = entry.search(GLOB);
  if (at === -1) {
    const real = realTarget(resolve(entry));
    const lexical = resolve(entry);
    return { shown: entry, covers: (p) => within(fold(p), fold(real)) || within(fold(p), fold(lexical)) };
  }
  const head = entry.slice(0, entry.lastIndexOf("/", at) + 1);
  const tail = entry.slice(head.length);
  const patterns = [globRule(join(realTarget(resolve(head)), tail)), globRule(entry)];
  return { shown: entry, covers: (p) => patterns.some((r) => r.test(p)) };
}

/** Prepares the effective policy for the file tools. */
export function fileRules(policy: EffectivePolicy, projectRoot: string, enforcement: Enforcement): FileRules {
  return {
    enforcement,
    projectRoot: realTarget(projectRoot),
    denyRead: policy.denyRead.map(rule),
    allowRead: policy.allowRead.map(rule),
    allowWrite: policy.allowWrite.map(rule),
    denyWrite: policy.denyWrite.map(rule),
    defaultDenyWrite: policy.defaultDenyWrite,
    protected: policy.protected.map(rule),
  };
}

/** Why the file tools may not read `path` (a denied region, not re-allowed), or undefined. */
export function readRefusal(rules: FileRules, path: string): string | undefined {
  if (rules.enforcement !== "full") return undefined;
  const denied = rules.denyRead.find((r) => r.covers(path));
  if (denied === undefined || rules.allowRead.some((r) => r.covers(path))) return undefined;
  return `the filesystem policy denies reading ${denied.shown} (credentials and tau's own secrets are denied by default); the user can allow it with \`:sandbox filesystem allow-read add ${path}\` in the interactive UI.`;
}

/**
 * Whether a write of `content` may land at `real` (`requested`: the path as named, links in it):
 * refused at a protected path whatever the enforcement; under `full` also refused by a deny-write
 * rule, and asked for outside the writable set (the grant is the nearest existing folder).
 */
export function writeVerdict(rules: FileRules, w: { real: string; requested: string; content: string }): WriteVerdict {
  for (const path of new Set([w.requested, w.real])) {
    const why = protectedReason(rules, path, w.content);
    if (why !== undefined) {
      return { kind: "refused", why: `${w.requested} is protected (${why}): the model's tools cannot change it. The user can, with a command of their own (!cmd) or an editor.` };
    }
  }
  if (rules.enforcement !== "full") return { kind: "ok" };
  const denied = rules.denyWrite.find((r) => r.covers(w.real));
  if (denied !== undefined) return { kind: "refused", why: `${w.requested} is covered by the deny-write rule ${denied.shown} of sandbox.yaml: the model's tools cannot change it. The user can, with a command of their own (!cmd) or an editor.` };
  if (rules.defaultDenyWrite && credentialFile(rules.projectRoot, w.real)) {
    return { kind: "refused", why: `${w.requested} is a credential file (.env*, *.pem, *.key) the sandbox keeps read-only in the project: the model's tools cannot change it. The user can, with a command of their own (!cmd) or an editor.` };
  }
  if (rules.allowWrite.some((r) => r.covers(w.real))) return { kind: "ok" };
  const grant = nearestFolder(w.real);
  if (grant === "/") return { kind: "refused", why: `${w.requested} would need write access to the whole filesystem (/), which no approval grants — the user can create it themselves (!cmd).` };
  return { kind: "ask", grant };
}

/** A `.env*`, `*.pem`, `*.key` file at most DENY_WRITE_SCAN_DEPTH levels into the project (the default deny-write). */
function credentialFile(projectRoot: string, path: string): boolean {
  if (!within(path, projectRoot) || path === projectRoot) return false;
  return relative(projectRoot, path).split(sep).length <= DENY_WRITE_SCAN_DEPTH && matchesDenyWrite(basename(path));
}

/**
 * A handoff's dossier file, `<project>/.tau/handoff_<session-id>.md` (SPEC-handoff): the one file of
 * the project's protected `.tau/` the file tools may write, as the model writes its dossier there
 * with its usual tools. Plain Markdown a later model reads; nothing runs it.
 */
export function handoffDossierFile(projectRoot: string, path: string): boolean {
  return dirname(path) === join(projectRoot, ".tau") && /^handoff_s-[A-Za-z0-9_-]{1,100}\.md$/.test(basename(path));
}

/** Why `path` is protected, in a few words, or undefined. */
export function protectedReason(rules: FileRules, path: string, content = ""): string | undefined {
  // A dossier file is exempt from the `.tau/` rule only (it covers `.tau/`, not the project): any
  // wider protected region covering it (tau's own roots around a project) still holds.
  const dossier = handoffDossierFile(rules.projectRoot, path);
  const tauRule = (r: Rule) => r.covers(join(rules.projectRoot, ".tau")) && !r.covers(rules.projectRoot);
  if (rules.protected.some((r) => r.covers(path) && !(dossier && tauRule(r)))) return "tau's configuration and state, the project's .tau/, git hooks and config, and files that run code on the host are protected";
  const parts = path.split("/");
  // Names compare without case: on a case-insensitive disk `.BASHRC` is `.bashrc`, elsewhere it is harmless.
  const names = parts.map((p) => p.toLowerCase());
  if (PROTECTED_NAMES.includes(names[names.length - 1] as string)) return "a shell start-up or tool configuration file runs code on the host";
  for (const folder of PROTECTED_FOLDERS) {
    const seq = folder.split("/");
    if (names.some((_, i) => seq.every((s, j) => names[i + j] === s) && i + seq.length < names.length)) return "editor and agent task and settings folders run code on the host";
  }
  return gitReason(rules.projectRoot, parts, content);
}

/** A git folder: named `.git`, inside one's `modules/` or `worktrees/`, or shaped like one (HEAD, and objects/ and refs/ or a commondir). */
function isGitFolder(dir: string): boolean {
  if (basename(dir) === ".git" || /\/\.git\/(?:modules|worktrees)\//.test(`${dir}/`)) return true;
  return gitShaped(dir);
}

function gitShaped(dir: string): boolean {
  return isFile(join(dir, "HEAD")) && ((isDir(join(dir, "objects")) && isDir(join(dir, "refs"))) || isFile(join(dir, "commondir")));
}

/** What in a folder git would run or follow once it is a git folder: a config, a commondir, a hook that is not a sample. */
function holdsRunnable(dir: string): boolean {
  if (["config", "config.worktree", "commondir"].some((f) => isFile(join(dir, f)))) return true;
  try {
    return readdirSync(join(dir, "hooks")).some((n) => !n.endsWith(".sample"));
  } catch {
    return false;
  }
}

/**
 * The git rules: every git folder's config, commondir, hooks and info (bare repositories and the
 * folders `.git` files point at included — git insists they be git folders); a write that would
 * make a folder holding a config or hooks into a git folder; a `.git` file that names anything but
 * a git folder in the project.
 */
function gitReason(projectRoot: string, parts: readonly string[], content: string): string | undefined {
  for (let i = 1; i < parts.length; i++) {
    const dir = parts.slice(0, i).join("/") || "/";
    const rest = parts.slice(i);
    const head = rest[0] as string;
    const control = (rest.length === 1 && GIT_CONTROL_FILES.has(head)) || (rest.length > 1 && GIT_CONTROL_FOLDERS.has(head));
    if (control && isGitFolder(dir)) return "a git folder's hooks and config run code outside the sandbox";
    const shaping = (rest.length === 1 && head === "HEAD") || (rest.length > 1 && (head === "objects" || head === "refs"));
    if (shaping && !gitShaped(dir) && holdsRunnable(dir)) {
      const has = (f: string): boolean => (f === head ? true : f === "HEAD" ? isFile(join(dir, f)) : isDir(join(dir, f)));
      if (has("HEAD") && ((has("objects") && has("refs")) || isFile(join(dir, "commondir")))) return "it would make a folder holding a config or hooks into a git folder, whose hooks and config run code";
    }
  }
  if (parts[parts.length - 1] === ".git") {
    const named = /^gitdir:\s*(.+?)\s*$/m.exec(content)?.[1];
    const target = named === undefined ? undefined : realTarget(resolve(dirname(parts.join("/")), named));
    if (target === undefined || !within(target, projectRoot) || !gitShaped(target)) return "a .git file makes git read config and hooks from the folder it names, which must be a git folder in the project";
  }
  return undefined;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The nearest existing folder at or above `path`. */
function nearestFolder(path: string): string {
  for (let dir = path; ; dir = dirname(dir)) {
    if (isDir(dir) || dirname(dir) === dir) return dir;
  }
}
