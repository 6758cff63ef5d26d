// Prompt fragments (SPEC-extension-declarations, "Prompt fragments"): the prompt-assembly projection
// of what live extensions declared. A declaration has already committed when it reaches here; only
// one from the exact live connection generation of its instance changes the projection, and a
// connection's fragments leave with it. Process memory only: never journaled, never replayed.
import type { Committed } from "../bus/index.js";

/** Fragments one instance may hold, and their total text bytes. */
export const MAX_FRAGMENTS_PER_INSTANCE = 16;
export const MAX_FRAGMENT_BYTES_PER_INSTANCE = 32 * 1024;

export interface PromptFragment {
  readonly instance: string;
  readonly key: string;
  readonly text: string;
}

export interface PromptFragmentsPort {
  /** Whether this generation is the live connection of its instance. */
  isLive(instance: string, generation: number): boolean;
  warn(message: string): void;
}

export class PromptFragments {
  /** instance → its live generation's fragments, by key. */
  private readonly byInstance = new Map<string, { generation: number; fragments: Map<string, string> }>();

  constructor(private readonly port: PromptFragmentsPort) {}

  /** A committed declaration: revalidated against the exact live generation, then bounded. */
  onDeclared(c: Committed<"extension.prompt_fragment_declared">): void {
    const p = c.publisher;
    if (p.class !== "extension" || p.instance === undefined || p.generation === undefined) return;
    if (!this.port.isLive(p.instance, p.generation)) return; // stale generation: observation only
    let held = this.byInstance.get(p.instance);
    if (held === undefined || held.generation !== p.generation) {
      held = { generation: p.generation, fragments: new Map() }; // an earlier generation's are gone
      this.byInstance.set(p.instance, held);
    }
    const { key, text } = c.data;
    if (text === null) {
      held.fragments.delete(key);
      return;
    }
    const next = new Map(held.fragments).set(key, text);
    const refuse = (why: string) => this.port.warn(`prompt fragment ${key} from extension ${p.instance} refused: ${why}`);
    if (next.size > MAX_FRAGMENTS_PER_INSTANCE) return refuse(`the instance already has ${MAX_FRAGMENTS_PER_INSTANCE} fragments`);
    const bytes = [...next.values()].reduce((n, t) => n + Buffer.byteLength(t), 0);
    if (bytes > MAX_FRAGMENT_BYTES_PER_INSTANCE) return refuse(`the instance's fragments would exceed ${MAX_FRAGMENT_BYTES_PER_INSTANCE} bytes`);
    held.fragments = next;
  }

  /** A connection ended: its fragments leave the projection (a respawned process declares its own). */
  onOwnerGone(instance: string, generation: number): void {
    if (this.byInstance.get(instance)?.generation === generation) this.byInstance.delete(instance);
  }

  /** The projection now, ordered by instance then key: what an agent initializing now takes. */
  current(): readonly PromptFragment[] {
    const out: PromptFragment[] = [];
    for (const [instance, held] of this.byInstance) {
      if (!this.port.isLive(instance, held.generation)) continue;
      for (const [key, text] of held.fragments) out.push({ instance, key, text });
    }
    return out.sort((a, b) => (a.instance === b.instance ? (a.key < b.key ? -1 : 1) : a.instance < b.instance ? -1 : 1));
  }
}
