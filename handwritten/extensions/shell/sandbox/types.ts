// The shapes the sandbox's modules share: what it needs of its extension, how it is set up, and
// one `shell` call as the extension hands it over.
import type { EventName, EventPayloads, SandboxLaunch } from "../../../../generated/index.js";
import type { Roots } from "../../../config/index.js";

/** What the sandbox needs of its extension: publishing, and nothing else. */
export interface SandboxHost {
  /** Publishes; may say whether the event was handed to the harness (`queued`) or not. */
  emit<N extends EventName>(name: N, data: EventPayloads[N]): unknown;
}

export interface SandboxOptions {
  readonly host: SandboxHost;
  readonly projectRoot: string;
  readonly roots: Roots;
  readonly launch?: SandboxLaunch;
  readonly env?: NodeJS.ProcessEnv;
  /** The platform checked (tests of the refusal on other platforms). */
  readonly platform?: NodeJS.Platform;
  /**
   * Who the sandbox confines, naming its working folder in the state root: `shell` (the default)
   * for the model's commands, which also share one network namespace; another name (an MCP
   * server's) for one long-lived process, with no shared namespace.
   */
  readonly owner?: string;
}

export interface ShellCall {
  readonly callId: string;
  readonly agentId: string;
  readonly cwd: string;
  readonly signal: AbortSignal;
  readonly onProgress?: (text: string) => void;
}

/** The first line of a text, at most `max` characters (prompts and reasons are one line). */
export function firstLine(text: string, max = 200): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
