// Structured styles: the only way presentation asks for colour or emphasis. They become SGR bytes
// only inside screen.ts; nothing else in tau writes escape sequences.

/** The sixteen ANSI colours by name, plus `default` (the terminal's own colour). */
export const NAMED_COLORS = [
  "default",
  "black",
  "red",
  "green",
  "yellow",
  "blue",
  "magenta",
  "cyan",
  "white",
  "brightBlack",
  "brightRed",
  "brightGreen",
  "brightYellow",
  "brightBlue",
  "brightMagenta",
  "brightCyan",
  "brightWhite",
] as const;
export type NamedColor = (typeof NAMED_COLORS)[number];

/** A named colour, a 256-colour palette index (0–255), or a truecolour `#rrggbb`. */
export type Color = NamedColor | number | `#${string}`;

export interface Style {
  readonly fg?: Color;
  readonly bg?: Color;
  readonly bold?: boolean;
  readonly dim?: boolean;
  readonly italic?: boolean;
  readonly underline?: boolean;
  readonly inverse?: boolean;
}

export const STYLE_KEYS = ["fg", "bg", "bold", "dim", "italic", "underline", "inverse"] as const;

/** The terminal's default style. */
export const DEFAULT_STYLE: Style = Object.freeze({});

const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;

/** Whether a value is a valid `Color`. */
export function isColor(value: unknown): value is Color {
  if (typeof value === "number") return Number.isInteger(value) && value >= 0 && value <= 255;
  if (typeof value !== "string") return false;
  return (NAMED_COLORS as readonly string[]).includes(value) || HEX_COLOR.test(value);
}

function colorParams(color: Color, background: boolean): string {
  if (typeof color === "number") return `${background ? 48 : 38};5;${color}`;
  if (color.startsWith("#")) {
    if (!HEX_COLOR.test(color)) return background ? "49" : "39";
    const r = parseInt(color.slice(1, 3), 16);
    const g = parseInt(color.slice(3, 5), 16);
    const b = parseInt(color.slice(5, 7), 16);
    return `${background ? 48 : 38};2;${r};${g};${b}`;
  }
  const i = (NAMED_COLORS as readonly string[]).indexOf(color);
  if (i <= 0) return background ? "49" : "39";
  const n = i - 1; // 0..15
  if (n < 8) return String((background ? 40 : 30) + n);
  return String((background ? 100 : 90) + n - 8);
}

/** The SGR parameter list for a style, always starting from a reset (`0`). */
export function sgrParams(style: Style): string {
  let p = "0";
  if (style.bold === true) p += ";1";
  if (style.dim === true) p += ";2";
  if (style.italic === true) p += ";3";
  if (style.underline === true) p += ";4";
  if (style.inverse === true) p += ";7";
  if (style.fg !== undefined) p += ";" + colorParams(style.fg, false);
  if (style.bg !== undefined) p += ";" + colorParams(style.bg, true);
  return p;
}

const keys = new WeakMap<Style, string>();

/** A canonical key: two styles with the same key render identically. */
export function styleKey(style: Style): string {
  let k = keys.get(style);
  if (k === undefined) {
    k = sgrParams(style);
    keys.set(style, k);
  }
  return k;
}

/** Whether two styles render identically. */
export function sameStyle(a: Style, b: Style): boolean {
  return a === b || styleKey(a) === styleKey(b);
}
