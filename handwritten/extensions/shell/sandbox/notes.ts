// Notes for a `shell` call's result from what happened while it ran: its connections' reviews and
// refusals, and the files moved out of the project after it (SPEC-sandbox, "Approvals" and
// "Created during a command"). Kept by call id until the call's result is written.

export class CallNotes {
  private readonly byCall = new Map<string, string[]>();

  /** Adds notes for a call. */
  push(callId: string, ...texts: string[]): void {
    const notes = this.byCall.get(callId) ?? [];
    notes.push(...texts);
    this.byCall.set(callId, notes);
  }

  /** Adds a note for a call unless the same text is already there. */
  once(callId: string, text: string): void {
    const notes = this.byCall.get(callId) ?? [];
    if (!notes.includes(text)) notes.push(text);
    this.byCall.set(callId, notes);
  }

  /** The call's notes (the result is written), forgetting them. */
  take(callId: string): string[] {
    const notes = this.byCall.get(callId) ?? [];
    this.byCall.delete(callId);
    return notes;
  }

  forget(callId: string): void {
    this.byCall.delete(callId);
  }
}
