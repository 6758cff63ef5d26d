import { describe, expect, it } from "vitest";
import { randomHex } from "../../../handwritten/startup/random.js";

describe("randomHex", () => {
  it("[protocol.random.hex] gives the asked number of random bytes as lowercase hex, never the same twice", () => {
    const seen = new Set<string>();
    // Well past one 256-byte pool, with sizes that do not divide it.
    for (let i = 0; i < 500; i++) {
      const n = [4, 6, 8, 300][i % 4] as number;
      const hex = randomHex(n);
      expect(hex).toMatch(new RegExp(`^[0-9a-f]{${2 * n}}$`));
      expect(seen.has(hex)).toBe(false);
      seen.add(hex);
    }
    // Every hex digit turns up at every position of 8-byte values: no stuck bits.
    const digits = Array.from({ length: 16 }, () => new Set<string>());
    for (let i = 0; i < 400; i++) [...randomHex(8)].forEach((d, at) => digits[at]?.add(d));
    for (const at of digits) expect(at.size).toBe(16);
  });
});
