import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  DEFAULT_THEME,
  Grid,
  THEME_KEYS,
  THEME_MAX_BYTES,
  ThemeError,
  loadThemeFile,
  parseTheme,
  render,
  sanitize,
  sgrParams,
} from "../../../handwritten/cli/ui/index.js";

const dir = mkdtempSync(join(tmpdir(), "tau-theme-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, body: string): string {
  const p = join(dir, name);
  writeFileSync(p, body);
  return p;
}

function rejects(fn: () => unknown, key: string, pattern: RegExp): ThemeError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ThemeError);
    const e = err as ThemeError;
    expect(e.key).toBe(key);
    expect(e.message).toMatch(pattern);
    return e;
  }
  throw new Error("expected a ThemeError");
}

describe("themes", () => {
  it("the default theme defines every key with structured styles", () => {
    expect(Object.keys(DEFAULT_THEME.styles).sort()).toEqual([...THEME_KEYS].sort());
  });

  it("loads JSON and YAML files, falling back to the default for missing keys", () => {
    const json = loadThemeFile(file("dark.json", JSON.stringify({ name: "dark", styles: { error: { fg: "#ff0000", bold: true }, muted: { fg: 244 } } })));
    expect(json.name).toBe("dark");
    expect(json.styles.error).toEqual({ fg: "#ff0000", bold: true });
    expect(json.styles.muted).toEqual({ fg: 244 });
    expect(json.styles.diffAdded).toEqual(DEFAULT_THEME.styles.diffAdded);
    const yaml = loadThemeFile(file("light.yaml", "name: light\nstyles:\n  accent:\n    fg: brightBlue\n    underline: true\n"));
    expect(yaml.styles.accent).toEqual({ fg: "brightBlue", underline: true });
    expect(sgrParams(json.styles.error)).toBe("0;1;38;2;255;0;0");
    expect(sgrParams(json.styles.muted)).toBe("0;38;5;244");
  });

  it("[ui.theme.no-raw-escapes] strings that look like escape sequences are rejected, naming the file and key", () => {
    const spellings = ["\x1b[31m", "\\x1b[31m", "\\e[31m", "\\033[0m", "\\u001b[1m", "^[[1m", "\x9b31m", "red\x07"];
    for (const s of spellings) {
      const p = file("evil.json", JSON.stringify({ styles: { error: { fg: s } } }));
      const e = rejects(() => loadThemeFile(p), "styles.error.fg", /escape sequence/);
      expect(e.file).toBe(p);
      expect(e.message).toContain("evil.json");
      expect(e.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      rejects(() => parseTheme(JSON.stringify({ name: s }), "t.json"), "name", /escape sequence/);
    }
    rejects(() => parseTheme("styles:\n  toolOk:\n    fg: \"\\e[32m\"\n", "t.yaml"), "styles.toolOk.fg", /escape sequence/);
  });

  it("[ui.theme.no-raw-escapes] unknown keys, properties and values are rejected with the key named", () => {
    rejects(() => parseTheme(JSON.stringify({ colours: {} }), "t.json"), "colours", /unknown key/);
    rejects(() => parseTheme(JSON.stringify({ styles: { errr: {} } }), "t.json"), "styles.errr", /unknown theme key/);
    rejects(() => parseTheme(JSON.stringify({ styles: { error: { blink: true } } }), "t.json"), "styles.error.blink", /unknown style property/);
    rejects(() => parseTheme(JSON.stringify({ styles: { error: { sgr: "1;31" } } }), "t.json"), "styles.error.sgr", /unknown style property/);
    rejects(() => parseTheme(JSON.stringify({ styles: { error: { fg: "crimson" } } }), "t.json"), "styles.error.fg", /colour/);
    rejects(() => parseTheme(JSON.stringify({ styles: { error: { fg: 256 } } }), "t.json"), "styles.error.fg", /colour/);
    rejects(() => parseTheme(JSON.stringify({ styles: { error: { fg: 255, bold: "yes" } } }), "t.json"), "styles.error.bold", /true or false/);
    rejects(() => parseTheme(JSON.stringify({ styles: { error: "bold red" } }), "t.json"), "styles.error", /style object/);
    rejects(() => parseTheme("{not json", "t.json"), "", /not valid JSON/);
    rejects(() => parseTheme("a: [", "t.yaml"), "", /not valid YAML/);
    rejects(() => loadThemeFile(file("t.txt", "{}")), "", /\.json, \.yaml or \.yml/);
    // Theme file size bound: exactly at accepted, one above refused.
    const pad = (n: number): string => `{"name":"p","styles":{}}${" ".repeat(n - 24)}`;
    expect(pad(THEME_MAX_BYTES)).toHaveLength(THEME_MAX_BYTES);
    expect(parseTheme(pad(THEME_MAX_BYTES), "t.json").name).toBe("p");
    expect(parseTheme(pad(THEME_MAX_BYTES - 1), "t.json").name).toBe("p");
    rejects(() => parseTheme(pad(THEME_MAX_BYTES + 1), "t.json"), "", /larger than/);
  });

  it("[ui.theme.no-raw-escapes] a theme reaches the terminal only as SGR built by the renderer", () => {
    const theme = parseTheme(JSON.stringify({ styles: { accent: { fg: 202, bg: "#102030", italic: true, inverse: true, dim: true } } }), "t.json");
    const grid = new Grid(4, 1);
    grid.write(0, 0, sanitize("ab"), theme.styles.accent);
    const out = render(undefined, grid);
    expect(out).toContain("\x1b[0;2;3;7;38;5;202;48;2;16;32;48mab");
    expect(out.replace(/\x1b\[[\d;]*[mHK]|\x1b\[2K/g, "")).not.toMatch(/[\u0000-\u001f]/);
  });
});
