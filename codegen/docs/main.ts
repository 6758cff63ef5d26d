// `npm run docs`: records/ + spec/ + generated tables → a static site in site/ (not committed).
// Options: `--root DIR` (the repository, default this checkout), `--out DIR` (default ROOT/site).
// A broken cross-reference (such as a record link to a missing record) prints each problem on
// stderr, naming the file and the link, and exits 1 without writing anything.
import { existsSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { AggregateCodegenError, CodegenError } from "../errors.js";
import { writeTree } from "../main.js";
import { COMMANDS } from "../../handwritten/cli/commands.js";
import { RUN_ENDS, errorEntries } from "../../handwritten/cli/error-docs.js";
import { EXIT_CODES } from "../../handwritten/cli/errors.js";
import { buildSite } from "./site.js";
import { COMMAND_SPECS } from "../../handwritten/cli/tui/command-mode.js";
import { KEY_ACTIONS, RESERVED_KEYS, keyLabel } from "../../handwritten/cli/tui/bindings.js";
import { DEFAULT_THEME, NAMED_COLORS, THEME_KEYS } from "../../handwritten/cli/ui/index.js";
import { STYLE_KEYS } from "../../handwritten/cli/ui/style.js";
import { choiceLabel } from "../../handwritten/cli/tui/sandbox-dialog.js";
import type { SandboxDecision } from "../../generated/index.js";

/** The approval dialog's choices for each kind of request, worded by the UI's own function. */
function approvalChoices(): Array<{ request: string; labels: string[] }> {
  const ask = (kind: "network" | "filesystem_write" | "filesystem_read", target: string, command: string) => ({ kind, target, command });
  const labels = (a: ReturnType<typeof ask>, choices: readonly SandboxDecision[]) => choices.map((c) => choiceLabel(a, c, "/home/you"));
  return [
    { request: "a connection to a host (HOST:PORT)", labels: labels(ask("network", "example.com:443", "curl https://example.com"), ["allow", "deny"]) },
    { request: "a command's write outside the writable folders", labels: labels(ask("filesystem_write", "/srv/data", "make install"), ["allow_retry", "allow_adapt", "deny"]) },
    { request: "a command's read of a protected path", labels: labels(ask("filesystem_read", "/home/you/.aws/config", "aws s3 ls"), ["allow_retry", "allow_adapt", "deny"]) },
    { request: "a file tool's write (write, edit) outside them", labels: labels(ask("filesystem_write", "/srv/data", "write /srv/data/notes.txt"), ["allow_retry", "allow_adapt", "deny"]) },
    { request: "a grant whose folder is, or holds, your home folder", labels: labels(ask("filesystem_write", "/home/you", "touch ~/x"), ["allow_adapt"]) },
  ];
}

/** A file the generator writes at the top of its output, so it never clears a folder it did not make. */
export const MARKER = ".tau-docs-site";
const MARKER_TEXT = "This folder is written by `npm run docs` (codegen/docs/). Its contents are replaced on every build.\n";

export async function generateSite(root: string): Promise<Map<string, string>> {
  const files = await buildSite({
    root,
    commands: COMMANDS,
    errors: { errors: errorEntries(), exitCodes: EXIT_CODES, runEnds: RUN_ENDS },
    guide: {
      colonCommands: COMMAND_SPECS,
      keyActions: KEY_ACTIONS,
      reservedKeys: RESERVED_KEYS,
      keyLabel,
      themeKeys: THEME_KEYS,
      defaultTheme: DEFAULT_THEME,
      styleKeys: STYLE_KEYS,
      namedColors: NAMED_COLORS,
      approvalChoices: approvalChoices(),
    },
  });
  return new Map([[MARKER, MARKER_TEXT], ...files]);
}

/** Builds the site and writes it to `out`, replacing a previous build there; returns the changed paths. */
export async function writeSite(root: string, out: string): Promise<{ files: number; changed: string[] }> {
  const absOut = resolve(out);
  const absRoot = resolve(root);
  if (absRoot === absOut || !relative(absOut, absRoot).startsWith("..")) {
    throw new CodegenError(out, "the output folder must not be the repository or contain it");
  }
  if (existsSync(absOut) && readdirSync(absOut).length > 0 && !existsSync(join(absOut, MARKER))) {
    throw new CodegenError(out, `refusing to replace a non-empty folder that has no ${MARKER} (not a previous docs build)`);
  }
  const files = await generateSite(absRoot);
  const changed = writeTree(absOut, files);
  return { files: files.size, changed };
}

async function main(argv: string[]): Promise<number> {
  const flag = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const root = flag("--root") ?? join(dirname(fileURLToPath(import.meta.url)), "..", "..");
  const out = flag("--out") ?? join(root, "site");
  try {
    const { files, changed } = await writeSite(root, out);
    console.log(`docs: ${files} file(s) in ${out}${changed.length === 0 ? ", all up to date" : `, ${changed.length} written or removed`}`);
    return 0;
  } catch (err) {
    if (err instanceof AggregateCodegenError) {
      for (const p of err.problems) console.error(`docs: ${p.message}`);
      return 1;
    }
    if (err instanceof CodegenError) {
      console.error(`docs: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
