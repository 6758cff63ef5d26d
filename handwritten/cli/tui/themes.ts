// The UI's theme: `default`, or a theme file of the config root's themes/ folder, chosen by cli.yaml
// `theme:` or `:theme NAME`. Loading and checking a file (no escape bytes) is cli/ui/theme.ts's.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_THEME, ThemeError, loadThemeFile, type Theme } from "../ui/index.js";
import type { UiContext } from "./context.js";

export class Themes {
  current: Theme = DEFAULT_THEME;

  constructor(
    private readonly configRoot: string,
    private readonly ui: Pick<UiContext, "note">,
  ) {}

  /** cli.yaml `theme:`: used when it can be, else an error notice naming cli.yaml. */
  configure(name: string): void {
    const theme = this.named(name);
    if (typeof theme === "string") this.ui.note("error", `cli.yaml: ${theme}`);
    else this.current = theme;
  }

  /** `:theme [NAME]`: lists the themes, or switches to one. */
  command(name: string | undefined): void {
    if (name === undefined) {
      return this.ui.note("info", `themes: ${themeNames(this.configRoot).join(", ")} (current: ${this.current.name}); theme files live in ${join(this.configRoot, "themes")}`);
    }
    const theme = this.named(name);
    if (typeof theme === "string") return this.ui.note("error", theme);
    this.current = theme;
    this.ui.note("info", `theme ${this.current.name}`);
  }

  /** The theme `name` (a file in the config root's themes/ folder, or `default`), or why it cannot be used. */
  private named(name: string): Theme | string {
    if (name === "default") return DEFAULT_THEME;
    const dir = join(this.configRoot, "themes");
    const file = themeFiles(dir).find((f) => f.replace(/\.(ya?ml|json)$/, "") === name);
    if (!file) return `no theme ${name}; themes: ${themeNames(this.configRoot).join(", ")}`;
    try {
      return loadThemeFile(join(dir, file));
    } catch (err) {
      return err instanceof ThemeError ? err.message : `the theme could not be read: ${(err as Error).message}`;
    }
  }
}

/** Theme files in `dir` (none when it does not exist). */
function themeFiles(dir: string): string[] {
  try {
    return readdirSync(dir).filter((f) => /\.(ya?ml|json)$/.test(f));
  } catch {
    return [];
  }
}

/** Every theme name the config root offers, `default` first. */
export function themeNames(configRoot: string): string[] {
  return ["default", ...themeFiles(join(configRoot, "themes")).map((f) => f.replace(/\.(ya?ml|json)$/, ""))];
}
