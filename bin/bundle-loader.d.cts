// Types for bin/bundle-loader.cjs (plain JavaScript, loaded by bin/run.js before anything is built).
export interface LoadedBundle {
  readonly exports: Record<string, unknown>;
  /** How the V8 code cache served this load. */
  readonly cache: "hit" | "miss" | "rejected" | "off";
  /** Writes the cache (once) when it was missing or rejected; call after the entry's start-up work. */
  settled(): void;
}

export function loadBundle(file: string): LoadedBundle;

/** The last line the build appends to a bundle whose bytes are `bytes`: its cache key, so the loader need not hash it. */
export function keyLine(bytes: Uint8Array): string;
