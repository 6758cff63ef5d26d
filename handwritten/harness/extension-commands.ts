// Colon commands owned by extensions (SPEC-extension-commands): an extension declares `:NAME`, an
// attached interface learns the live set, and `:NAME ARGS` goes, raw, to the one live instance that
// declared it — as wire messages on that instance's connection only. Nothing here is published,
// journaled or offered to the debug log, so a sensitive argument (an OAuth code) reaches no
// subscriber, journal or events.jsonl.
import type { ExtensionCommandDeclareMessage, ExtensionCommandResultMessage, ExtensionCommandSpec, NoticeLevel, WireMessage } from "../../generated/index.js";
import type { SendResult } from "../transport/index.js";
import { mintId } from "./ids.js";

/** Longest wait for an extension's answer to one of its commands. */
export const COMMAND_ANSWER_MS = 30_000;
/** Most commands one instance may declare; more are refused with a notice. */
export const MAX_COMMANDS_PER_INSTANCE = 16;
/** Most answers awaited at once (every interface together). */
export const MAX_COMMANDS_PENDING = 64;

export interface CommandPort {
  /** Sends a wire message to the live connection of `generation`. */
  send(generation: number, message: WireMessage): SendResult | false;
  /** The live set changed: every attached interface learns it. */
  changed(commands: readonly ExtensionCommandSpec[]): void;
  warn(text: string, instance: string): void;
}

interface Owned {
  readonly spec: ExtensionCommandSpec;
  readonly generation: number;
}

interface Pending {
  readonly generation: number;
  readonly resolve: (answer: { level: NoticeLevel; text: string }) => void;
  readonly timer: NodeJS.Timeout;
}

export class ExtensionCommands {
  private readonly byName = new Map<string, Owned>();
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly port: CommandPort) {}

  /** The live commands, by name. */
  list(): ExtensionCommandSpec[] {
    return [...this.byName.values()].map((o) => o.spec).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** `extension_command_declare` from `instance`'s connection `generation`; the first owner of a name keeps it. */
  declare(instance: string, generation: number, p: ExtensionCommandDeclareMessage["payload"]): void {
    const existing = this.byName.get(p.name);
    if (existing !== undefined && existing.spec.instance !== instance) {
      return this.port.warn(`extension "${instance}": command :${p.name} is already offered by "${existing.spec.instance}"; ignored`, instance);
    }
    const owned = [...this.byName.values()].filter((o) => o.spec.instance === instance && o.spec.name !== p.name).length;
    if (owned >= MAX_COMMANDS_PER_INSTANCE) return this.port.warn(`extension "${instance}": more than ${MAX_COMMANDS_PER_INSTANCE} commands; :${p.name} ignored`, instance);
    this.byName.set(p.name, { generation, spec: { name: p.name, usage: p.usage, summary: p.summary, sensitive: p.sensitive === true, instance } });
    this.port.changed(this.list());
  }

  /** An instance's connection ended: its commands go, and commands awaiting it are answered. */
  gone(instance: string, generation: number): void {
    let changed = false;
    for (const [name, o] of this.byName) {
      if (o.spec.instance !== instance || o.generation !== generation) continue;
      this.byName.delete(name);
      changed = true;
    }
    for (const [id, p] of this.pending) if (p.generation === generation) this.settle(id, { level: "error", text: `extension "${instance}" stopped before it answered` });
    if (changed) this.port.changed(this.list());
  }

  /**
   * Runs `:name args` in its owning instance and resolves with that instance's answer (or why
   * there is none). The arguments leave this process only on that instance's connection.
   */
  invoke(name: string, args: readonly string[]): Promise<{ level: NoticeLevel; text: string }> {
    const owner = this.byName.get(name);
    if (owner === undefined) return Promise.resolve({ level: "error", text: `no extension of this session offers :${name}` });
    if (this.pending.size >= MAX_COMMANDS_PENDING) return Promise.resolve({ level: "error", text: `too many extension commands are waiting for their answer; try again` });
    const invokeId = mintId("r");
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle(invokeId, { level: "error", text: `extension "${owner.spec.instance}" did not answer :${name} within ${COMMAND_ANSWER_MS / 1000} s` }), COMMAND_ANSWER_MS);
      timer.unref();
      this.pending.set(invokeId, { generation: owner.generation, resolve, timer });
      const sent = this.port.send(owner.generation, { message: "extension_command_invoke", payload: { invoke_id: invokeId, name, args: [...args] } });
      if (sent !== "queued") this.settle(invokeId, { level: "error", text: `extension "${owner.spec.instance}" cannot take :${name} now` });
    });
  }

  /** `extension_command_result` from connection `generation`: only the connection asked may answer. */
  answered(generation: number, p: ExtensionCommandResultMessage["payload"]): void {
    const pending = this.pending.get(p.invoke_id);
    if (pending === undefined || pending.generation !== generation) return;
    this.settle(p.invoke_id, { level: p.level === "critical" ? "error" : p.level, text: p.text });
  }

  private settle(id: string, answer: { level: NoticeLevel; text: string }): void {
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    p.resolve(answer);
  }
}
