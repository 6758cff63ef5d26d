// A small seeded random source (mulberry32): a round's choices follow from the soak's seed and the
// round's number alone, so `--seed S --round N` makes the same choices again.

export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /**
   * The generator of round `round` under `seed`: seed and round are each mixed before they are
   * combined, so neighbouring seeds do not share rounds.
   */
  static forRound(seed: number, round: number): Rng {
    return new Rng(mix(mix(seed ^ 0x9e3779b9) ^ mix(Math.imul(round + 1, 0x27d4eb2d))));
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from nothing");
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** One key of `weights`, each with a chance proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as Array<[K, number]>;
    const total = entries.reduce((s, [, w]) => s + w, 0);
    let x = this.next() * total;
    for (const [k, w] of entries) {
      x -= w;
      if (x < 0) return k;
    }
    return (entries.at(-1) as [K, number])[0];
  }
}

/** A 32-bit finalizer (murmur3's): every input bit reaches every output bit. */
function mix(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
