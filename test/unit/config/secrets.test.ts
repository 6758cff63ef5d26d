import { describe, expect, it } from "vitest";
import { useTempDirs } from "../../support/temp-dirs.js";
import { chmodSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_SECRET_BYTES, SecretError, preloadSecrets, readSecret, writeSecret } from "../../../handwritten/config/index.js";

const root = useTempDirs("tau-secrets-");

describe("file-backed secrets", () => {
  it("writes 0600 in a 0700 folder atomically, tightening a wide folder, and reads it back", () => {
    const r = root();
    mkdirSync(join(r, "secrets"), { mode: 0o755 });
    chmodSync(join(r, "secrets"), 0o755);
    const path = writeSecret(r, "provider-a", "sk-one");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(r, "secrets")).mode & 0o777).toBe(0o700);
    writeSecret(r, "provider-a", "sk-two");
    expect(readSecret(r, "provider-a")).toBe("sk-two");
    expect(readdirSync(join(r, "secrets"))).toEqual(["provider-a"]);
  });

  it("refuses group/other modes, symbolic links and oversize files with the fix; absent is undefined", () => {
    const r = root();
    expect(readSecret(r, "nope")).toBeUndefined();
    const path = writeSecret(r, "k", "sk-x");
    for (const m of [0o640, 0o604, 0o660, 0o601]) {
      chmodSync(path, m);
      expect(() => readSecret(r, "k")).toThrow(`chmod 600 ${path}`);
    }
    chmodSync(path, 0o400);
    expect(readSecret(r, "k")).toBe("sk-x");
    symlinkSync(path, join(r, "secrets", "link"));
    expect(() => readSecret(r, "link")).toThrow(SecretError);
    writeFileSync(join(r, "secrets", "big"), "x".repeat(MAX_SECRET_BYTES + 1), { mode: 0o600 });
    expect(() => readSecret(r, "big")).toThrow("larger than");
    writeFileSync(join(r, "secrets", "edge"), "y".repeat(MAX_SECRET_BYTES), { mode: 0o600 });
    expect(readSecret(r, "edge")).toHaveLength(MAX_SECRET_BYTES);
  });

  it("rejects empty, control-character and oversize values and invalid names before writing", () => {
    const r = root();
    expect(() => writeSecret(r, "k", "")).toThrow("empty");
    expect(() => writeSecret(r, "k", "a\nb")).toThrow("control");
    expect(() => writeSecret(r, "k", "z".repeat(MAX_SECRET_BYTES + 1))).toThrow("larger");
    expect(() => writeSecret(r, "../k", "v")).toThrow("invalid secret name");
    expect(readSecret(r, "k")).toBeUndefined();
  });

  it("preloads the environment first, then config, then state", () => {
    const config = root();
    const state = root();
    writeSecret(config, "a", "from-config");
    writeSecret(state, "a", "from-state");
    writeSecret(state, "b", "state-only");
    const m = preloadSecrets(["a", "b", "c", "d"], { TAU_SECRET_D: "env" }, { config, state });
    expect([...m.entries()].sort()).toEqual([
      ["a", "from-config"],
      ["b", "state-only"],
    ]);
  });
});
