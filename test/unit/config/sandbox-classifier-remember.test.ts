// `:sandbox classifier … --global` writes the global sandbox.yaml (SPEC-sandbox-reviewer, "Selection"):
// the key is set or removed, the rest of the file is kept, and a file that does not parse is never
// rewritten.
import { describe, expect, it } from "vitest";
import { useTempDirs } from "../../support/temp-dirs.js";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadSandboxConfig, rememberClassifier } from "../../../handwritten/config/index.js";

const configRoot = useTempDirs("tau-sbx-remember-");

describe("remembering the reviewer in the global sandbox.yaml", () => {
  it("[sandbox.review.remember-global-file] sets, replaces and removes classifier, keeping the rest; an unparseable file is refused and left as it was", async () => {
    const root = configRoot();
    const file = join(root, "sandbox.yaml");
    // No file yet: one is made that loads.
    await rememberClassifier(root, "provider/small");
    expect(readFileSync(file, "utf8")).toBe("classifier: provider/small\n");
    writeFileSync(file, "# mine\nmode: interactive # kept\nclassifier: provider/small\n");
    await rememberClassifier(root, false);
    expect(readFileSync(file, "utf8")).toBe("# mine\nmode: interactive # kept\nclassifier: false\n");
    const loaded = await loadSandboxConfig({ configRoot: root, projectRoot: root, env: {} });
    expect(loaded.config).toMatchObject({ mode: "interactive", classifier: false });
    await rememberClassifier(root, undefined);
    expect(readFileSync(file, "utf8")).toBe("# mine\nmode: interactive # kept\n");

    const broken = "mode: [unclosed\n";
    writeFileSync(file, broken);
    const err = await rememberClassifier(root, "provider/small").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain("does not parse");
    expect(readFileSync(file, "utf8")).toBe(broken);
  });
});
