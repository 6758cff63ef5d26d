// The bounded, process-local cache of native occurrence ids (SPEC-slack, "Occurrences"): an Events
// API `event_id` is recorded before anything else is done with it, so a repeat — Slack's retry, a
// replayed envelope — is dropped even when the first delivery failed later on. Eviction or a
// restart forgets it; the bridge may then deliver it again.
export class Occurrences {
  private readonly seen = new Set<string>();

  constructor(private readonly max: number) {}

  /** Records `id`; false when it was already recorded (a repeat to drop). */
  record(id: string): boolean {
    if (this.seen.has(id)) return false;
    this.seen.add(id);
    if (this.seen.size > this.max) this.seen.delete(this.seen.values().next().value as string);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}
