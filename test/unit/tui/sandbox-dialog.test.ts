// The sandbox's approval dialog says what each choice grants and for how long, and a request's key
// pressed just after the request closed on its own (its command timed out, another UI answered) is
// not typed into the editor (issue: the dialog hid scope and duration, and a late key landed in the prompt).
import { describe, expect, it } from "vitest";
import { SandboxDialog, choiceLabel } from "../../../handwritten/cli/tui/sandbox-dialog.js";
import { Editor } from "../../../handwritten/cli/tui/editor.js";
import type { UiContext } from "../../../handwritten/cli/tui/context.js";
import { DEFAULT_THEME } from "../../../handwritten/cli/ui/theme.js";
import type { Delivery } from "../../../handwritten/cli/session-client.js";
import type { SandboxApprovalRequested } from "../../../generated/index.js";

const request = (o: Partial<SandboxApprovalRequested>): SandboxApprovalRequested => ({
  approval_id: "ap-1",
  kind: "filesystem_write",
  target: "/work/out",
  choices: ["allow_retry", "allow_adapt", "deny"],
  agent_id: "a-1",
  call_id: "c-1",
  command: "echo hi > /work/out/f",
  ...o,
});

function delivery(name: string, data: Record<string, unknown>): Delivery {
  return { seq: 1, recorded_at: 0, replay: false, publisher: { class: "extension" }, event: { name, data } } as unknown as Delivery;
}

function dialog(): { d: SandboxDialog; notes: string[]; emitted: unknown[]; clock: { t: number } } {
  const notes: string[] = [];
  const emitted: unknown[] = [];
  const clock = { t: 1_000 };
  const ui = {
    client: () => ({ emit: (name: string, data: unknown) => emitted.push({ name, data }) }),
    note: (_level: string, text: string) => notes.push(text),
    schedule: () => {},
  } as unknown as UiContext;
  return { d: new SandboxDialog(ui, () => clock.t), notes, emitted, clock };
}

describe("the approval dialog", () => {
  it("[sandbox.tui.choices-say-scope] each choice says what it grants and for how long", () => {
    const net = request({ kind: "network", target: "example.com:443", choices: ["allow", "deny"] });
    expect(choiceLabel(net, "allow")).toBe("[a] allow this connection (later ones ask again)");
    expect(choiceLabel(net, "deny")).toBe("[d] deny, and refuse this host for the rest of this session");
    const cmd = request({});
    expect(choiceLabel(cmd, "allow_retry")).toBe("[a] allow once: run the whole command again (what its first run did stays done)");
    expect(choiceLabel(cmd, "allow_adapt", "/home/u")).toBe("[m] allow writing in that folder for the rest of this session (the model tries again itself)");
    // A folder that holds the home folder says so: the grant is that wide.
    expect(choiceLabel(request({ target: "/home/u" }), "allow_adapt", "/home/u")).toContain("writing in that folder (all of your home folder) for the rest of this session");
    expect(choiceLabel(request({ target: "/home" }), "allow_adapt", "/home/u")).toContain("(all of your home folder)");
    expect(choiceLabel(request({ command: "write /work/out/f" }), "allow_retry")).toBe("[a] allow this write once");
    expect(choiceLabel(request({ kind: "filesystem_read", target: "/home/u/.aws/config" }), "allow_adapt", "/home/u")).toBe(
      "[m] allow reading it for the rest of this session (the model tries again itself)",
    );
    const { d } = dialog();
    d.deliver(delivery("sandbox.approval_requested", { ...net }));
    const rows = d.rows(200, DEFAULT_THEME).map((r) => JSON.stringify(r));
    expect(rows.some((r) => r.includes("[d] deny, and refuse this host for the rest of this session"))).toBe(true);
  });

  it("[sandbox.tui.late-key-not-typed] a request's key pressed within 1.5 s of it closing on its own answers nothing and is not typed; later, or after this UI's own answer, keys type", () => {
    const { d, notes, emitted, clock } = dialog();
    const editor = new Editor();
    d.deliver(delivery("sandbox.approval_requested", { ...request({}) }));
    d.deliver(delivery("sandbox.approval_resolved", { approval_id: "ap-1", outcome: "revoked" }));
    expect(notes.at(-1)).toContain("the request for access to /work/out was withdrawn");
    clock.t += 500;
    expect(d.key("a", editor)).toBe(true);
    expect(notes.at(-1)).toBe('sandbox: the request had already closed, so "a" answered nothing and was not typed');
    expect(emitted).toEqual([]);
    // Once only, and not a key the request did not offer.
    expect(d.key("a", editor)).toBe(false);
    d.deliver(delivery("sandbox.approval_requested", { ...request({ approval_id: "ap-2" }) }));
    d.deliver(delivery("sandbox.approval_resolved", { approval_id: "ap-2", outcome: "revoked" }));
    expect(d.key("x", editor)).toBe(false);
    clock.t += 2_000;
    expect(d.key("a", editor)).toBe(false);
    // Answered here: its resolution is no surprise, the next keys are the editor's.
    d.deliver(delivery("sandbox.approval_requested", { ...request({ approval_id: "ap-3" }) }));
    expect(d.key("d", editor)).toBe(true);
    expect(emitted).toEqual([{ name: "sandbox.approval_answer", data: { approval_id: "ap-3", decision: "deny" } }]);
    d.deliver(delivery("sandbox.approval_resolved", { approval_id: "ap-3", outcome: "denied" }));
    expect(d.key("d", editor)).toBe(false);
  });
});
