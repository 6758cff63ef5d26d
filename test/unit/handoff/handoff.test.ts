// The handoff extension's deterministic parts (SPEC-handoff): template precedence, the recovery
// file's round trip, the first turn's assembly and the sandbox's one exception for the dossier file.
// Real files in a temporary folder.
import { describe, expect, it } from "vitest";
import { useTempDirs } from "../../support/temp-dirs.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUILTIN_TEMPLATES, resolveTemplate } from "../../../handwritten/extensions/handoff/templates.js";
import { firstTurn, formatRecovery, parseRecovery, readRecovery, writeAtomic } from "../../../handwritten/extensions/handoff/recovery.js";
import { dossierProblem } from "../../../handwritten/harness/handoff-request.js";
import { handoffDossierFile } from "../../../handwritten/extensions/shell/sandbox/file-policy.js";

const tmp = useTempDirs("tau-handoff-");

describe("handoff templates", () => {
  it("[handoff.templates.precedence] project .tau/handoff/ wins over the global config root, which wins over the built-in; unusable files are skipped with a warning", () => {
    const root = tmp();
    const roots = { project: join(root, "project"), config: join(root, "config") };
    expect(resolveTemplate("call.md", roots)).toEqual({ text: BUILTIN_TEMPLATES["call.md"], origin: "builtin" });
    mkdirSync(join(roots.config, "handoff"), { recursive: true });
    writeFileSync(join(roots.config, "handoff", "call.md"), "GLOBAL {{key}}");
    expect(resolveTemplate("call.md", roots)).toMatchObject({ text: "GLOBAL {{key}}", origin: "global" });
    mkdirSync(join(roots.project, ".tau", "handoff"), { recursive: true });
    writeFileSync(join(roots.project, ".tau", "handoff", "call.md"), "PROJECT {{key}}");
    expect(resolveTemplate("call.md", roots)).toMatchObject({ text: "PROJECT {{key}}", origin: "project" });
    // The other template is resolved on its own.
    expect(resolveTemplate("dossier.md", roots).origin).toBe("builtin");
    // A project file with a NUL is skipped, with a warning: the global one is used.
    writeFileSync(join(roots.project, ".tau", "handoff", "call.md"), "bad\u0000file");
    const warnings: string[] = [];
    expect(resolveTemplate("call.md", roots, (w) => warnings.push(w)).origin).toBe("global");
    expect(warnings[0]).toContain("NUL");
    // Too large: skipped as well.
    writeFileSync(join(roots.config, "handoff", "call.md"), "x".repeat(64 * 1024 + 1));
    expect(resolveTemplate("call.md", roots, (w) => warnings.push(w)).origin).toBe("builtin");
    expect(warnings.at(-1)).toContain("larger than");
  });
});

describe("handoff recovery file and dossier", () => {
  it("[handoff.first-turn.assembly] the first turn names the dossier file's absolute path with its ingestion and cleanup instructions, never its text; the harness requires its first line to name the new session; the file tools may write exactly a dossier file of the project's .tau/", () => {
    expect(handoffDossierFile("/p", "/p/.tau/handoff_s-abc_1.md")).toBe(true);
    expect(handoffDossierFile("/p", "/p/.tau/sandbox.yaml")).toBe(false);
    expect(handoffDossierFile("/p", "/p/.tau/handoff/handoff_s-a.md")).toBe(false);
    expect(handoffDossierFile("/p", "/p/.tau/handoff_s-a.md.sh")).toBe(false);
    expect(handoffDossierFile("/p", "/q/.tau/handoff_s-a.md")).toBe(false);
    const dossier = firstTurn({ source: "s-a", target: "s-b", path: "/p/.tau/handoff_s-a.md", deleteAfterReading: true, deferred: [] });
    expect(dossier).toContain("\n/p/.tau/handoff_s-a.md\n");
    expect(dossier).toContain("delete exactly that file");
    expect(firstTurn({ source: "s-a", target: "s-b", path: "/p/x.md", deleteAfterReading: false, deferred: ["one"] })).toMatch(/Leave the file in place[\s\S]*--- Deferred Prompt 1 of 1 ---\none\n$/);
    expect(dossierProblem(dossier, "s-b")).toBeUndefined();
    expect(dossierProblem(dossier, "s-c")).toContain("first line");
    expect(dossierProblem("", "s-b")).toContain("empty");
    expect(dossierProblem("# to s-b\n\u0000", "s-b")).toContain("NUL");
  });

  it("[handoff.recovery.round-trip] deferred prompts read back verbatim and in order, markers inside a prompt included; the file is replaced atomically", () => {
    const prompts = ["one\nwith two lines", "--- Deferred Prompt 1 of 1 ---\nlooks like a marker", "", "  indented  "];
    const state = { session: "s-1", agent: "a-1", phase: "writing" as const, newSession: "s-2", deferred: prompts };
    const text = formatRecovery(state);
    expect(text).toContain("--- Deferred Prompt 2 of 4 ---\n--- Deferred Prompt 1 of 1 ---\nlooks like a marker\n");
    expect(parseRecovery(text)).toEqual(state);
    expect(() => parseRecovery(text.slice(0, -3))).toThrow();
    const path = join(tmp(), "ext", "recovery-s-1.md");
    writeAtomic(path, text);
    expect(readRecovery(path)).toEqual(state);
    writeAtomic(path, formatRecovery({ ...state, deferred: [] }));
    expect(readRecovery(path)?.deferred).toEqual([]);
    expect(readRecovery(join(tmp(), "absent.md"))).toBeUndefined();
    // A release in progress keeps its base: how many of the extension's prompts came before it.
    const releasing = { session: "s-1", agent: "a-1", phase: "releasing" as const, deferred: prompts, releaseBase: 7 };
    expect(parseRecovery(formatRecovery(releasing))).toEqual(releasing);
    expect(formatRecovery(releasing)).toContain("release base: 7\n");
    expect(() => parseRecovery(formatRecovery(releasing).replace('"release_base":7', '"release_base":-1'))).toThrow(/release base/);
    const turn = firstTurn({ source: "s-1", target: "s-2", path: "/p/.tau/handoff_s-1.md", deleteAfterReading: true, deferred: prompts.slice(0, 2) });
    expect(turn.split("\n")[0]).toBe("# Handoff from session s-1 to session s-2");
    expect(turn.indexOf("--- Deferred Prompt 1 of 2 ---\none\nwith two lines\n")).toBeGreaterThan(turn.indexOf("/p/.tau/handoff_s-1.md"));
  });
});
