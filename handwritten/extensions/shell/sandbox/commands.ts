// The `:sandbox` commands (SPEC-sandbox, "Commands"): each answers the UI with a text; every one
// that changes the policy withdraws the decisions pending under the old one.
import { rememberClassifier, trustProject } from "../../../config/index.js";
import type { Approvals } from "./approvals.js";
import { doctorText, showText, type ReportParts } from "./doctor.js";
import type { SandboxLifecycle } from "./lifecycle.js";
import { CLASSIFIER_ID, type Reviewer } from "./review.js";
import type { SandboxOptions } from "./types.js";

/** What a command answers the UI. */
export interface CommandAnswer {
  ok: boolean;
  text: string;
}

const USAGE =
  "usage: :sandbox show | doctor | on | off | mode [interactive|non-interactive] | network allow|deny add|remove HOST | filesystem allow-write|allow-read|deny-read add|remove PATH | classifier provider/model|false|default [--global] | trust | pending";

export class SandboxCommands {
  private readonly life: SandboxLifecycle;
  private readonly reviewer: Reviewer;
  private readonly approvals: Approvals;

  constructor(
    private readonly o: SandboxOptions,
    private readonly parts: ReportParts & { readonly approvals: Approvals },
  ) {
    this.life = parts.life;
    this.reviewer = parts.reviewer;
    this.approvals = parts.approvals;
  }

  /** Runs `:sandbox ARGS`; the text answers the UI. */
  async run(args: readonly string[]): Promise<CommandAnswer> {
    await this.life.start();
    const [verb, ...rest] = args;
    switch (verb) {
      case undefined:
      case "show":
        return { ok: true, text: showText(this.o, this.parts) };
      case "doctor":
        // A start that took a kept wrap has not started the runtime: the doctor checks its dependencies now.
        if (this.life.onDemand) await this.life.runtimeForWrap().catch(() => {});
        return { ok: true, text: doctorText(this.parts) };
      case "pending":
        return { ok: true, text: `${this.approvals.republish()} pending approval(s)` };
      case "on":
      case "off":
        return this.turn(verb === "on");
      case "mode": {
        const m = rest[0];
        // `:sandbox mode` alone says the mode in force.
        if (m === undefined) return { ok: true, text: `sandbox mode: ${this.life.mode}` };
        if (m !== "interactive" && m !== "non-interactive") return { ok: false, text: USAGE };
        this.life.modeOverride = m;
        this.approvals.revokeAll();
        this.life.report();
        return { ok: true, text: `sandbox mode: ${m} (for this session)` };
      }
      case "network":
        return this.network(rest);
      case "filesystem":
        return this.filesystem(rest);
      case "classifier":
        return this.classifier(rest);
      case "trust": {
        const project = trustProject(this.o.roots.config, this.o.projectRoot);
        const reloaded = await this.reload();
        return { ok: reloaded, text: reloaded ? `trusted ${project}; its .tau/sandbox.yaml now applies` : `trusted ${project}, but its configuration does not load: ${this.life.reason ?? ""}` };
      }
      default:
        return { ok: false, text: USAGE };
    }
  }

  private turn(on: boolean): CommandAnswer {
    const life = this.life;
    life.userSuspended = !on;
    if (life.state === "active" && !on) {
      this.approvals.revokeAll();
      life.enter("suspended", ":sandbox off — model commands run with your full rights until :sandbox on");
      return { ok: true, text: "sandbox suspended for this session: model commands run with your full rights" };
    }
    if (life.state === "suspended" && on) {
      this.approvals.revokeAll();
      life.enter("active");
      return { ok: true, text: "sandbox active again" };
    }
    return { ok: life.state !== "blocked", text: `the sandbox is ${life.state}${life.reason ? ` (${life.reason})` : ""}` };
  }

  private network(rest: readonly string[]): CommandAnswer {
    const [list, op, host] = rest;
    if ((list !== "allow" && list !== "deny") || (op !== "add" && op !== "remove") || host === undefined || !/^[A-Za-z0-9*.[\]:_-]{1,253}$/.test(host)) return { ok: false, text: USAGE };
    const set = list === "allow" ? this.life.grants.allowDomains : this.life.grants.denyDomains;
    if (op === "add") set.add(host);
    else set.delete(host);
    this.approvals.revokeAll();
    try {
      this.life.updateNetwork();
    } catch (err) {
      set.delete(host);
      return { ok: false, text: `not applied: ${(err as Error).message}` };
    }
    return { ok: true, text: `network ${list}: ${op === "add" ? "added" : "removed"} ${host} (this session only)` };
  }

  private filesystem(rest: readonly string[]): CommandAnswer {
    const [list, op, path] = rest;
    if ((list !== "allow-write" && list !== "deny-read" && list !== "allow-read") || (op !== "add" && op !== "remove") || path === undefined || !path.startsWith("/")) {
      return { ok: false, text: `${USAGE} (PATH absolute)` };
    }
    const grants = this.life.grants;
    const set = list === "allow-write" ? grants.allowWrite : list === "allow-read" ? grants.allowRead : grants.denyRead;
    if (op === "add") set.add(path);
    else if (!set.delete(path) && list === "deny-read") return { ok: false, text: `${path} is not a session deny-read entry; the configured ones change in sandbox.yaml` };
    this.approvals.revokeAll();
    return { ok: true, text: `filesystem ${list}: ${op === "add" ? "added" : "removed"} ${path} (this session only)` };
  }

  /**
   * `:sandbox classifier provider/model|false|default [--global]` (SPEC-sandbox-reviewer, "Selection"):
   * saved with the session (it wins over the configuration and comes back on resume), or remembered
   * in the global sandbox.yaml with `--global` (the session's own choice is then withdrawn).
   */
  private async classifier(rest: readonly string[]): Promise<CommandAnswer> {
    const global = rest.includes("--global");
    const values = rest.filter((r) => r !== "--global");
    const usage = "usage: :sandbox classifier provider/model|false|default [--global] — a configured provider model reviews permission requests before the manual prompt; false keeps manual approvals; default withdraws the session's choice";
    if (values.length === 0 && !global) return { ok: true, text: `${this.reviewer.selectionLine()}\n${usage}` };
    const [raw] = values;
    if (values.length !== 1 || raw === undefined) return { ok: false, text: usage };
    const value: string | false | undefined = raw === "false" ? false : raw === "default" ? undefined : raw;
    if (typeof value === "string" && !CLASSIFIER_ID.test(value)) return { ok: false, text: `${raw} is not a provider/model id; ${usage}` };
    if (global) {
      let path: string;
      try {
        path = await rememberClassifier(this.o.roots.config, value);
      } catch (err) {
        return { ok: false, text: `not remembered: ${(err as Error).message}` };
      }
      this.reviewer.selectSession(undefined);
      const reloaded = await this.reload();
      const overridden = this.o.launch?.config_file !== undefined ? ` (this run reads --sandbox-config instead, so it applies from the next run without it)` : "";
      return { ok: reloaded, text: reloaded ? `remembered in ${path}${overridden}\n${this.reviewer.selectionLine()}` : `remembered in ${path}, but the configuration does not load: ${this.life.reason ?? ""}` };
    }
    this.reviewer.selectSession(value);
    return { ok: true, text: `${this.reviewer.selectionLine()}${value === undefined ? "" : " — saved with this session"}` };
  }

  /** Reads sandbox.yaml again, withdrawing what was pending under the old policy. */
  private reload(): Promise<boolean> {
    this.approvals.revokeAll();
    return this.life.reload();
  }
}
