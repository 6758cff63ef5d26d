// An editor driving `tau acp` (SPEC-acp): the real process started as an editor starts it, and the
// official SDK's client side over its standard input and output.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { expect } from "vitest";
import { client, ndJsonStream, type ClientCapabilities, type ClientContext, type ReadTextFileRequest, type ReadTextFileResponse, type RequestPermissionRequest, type RequestPermissionResponse, type SessionNotification } from "@agentclientprotocol/sdk";
import type { Cleanups, Workspace } from "./e2e.js";
import { TAU_BIN } from "./paths.js";

/** `tau acp` started as an editor starts it. */
export function startAcp(cleanups: Cleanups, w: Workspace): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, [TAU_BIN, "acp"], { env: w.env, cwd: w.project, stdio: ["pipe", "pipe", "pipe"] });
  cleanups.push(() => child.kill("SIGKILL"));
  return child;
}

/** What the editor answers besides updates: permissions, and (declared) file reads. */
export interface EditorSide {
  permission?: (params: RequestPermissionRequest) => RequestPermissionResponse;
  /** Declares `fs.readTextFile` and answers `fs/read_text_file` with it. */
  readTextFile?: (params: ReadTextFileRequest) => ReadTextFileResponse;
}

/** Runs `op` as an ACP client of `child`, collecting every `session/update`. */
export async function asEditor<T>(
  child: ChildProcessWithoutNullStreams,
  updates: SessionNotification[],
  op: (ctx: ClientContext) => Promise<T>,
  side: EditorSide = {},
): Promise<T> {
  const stream = ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
  let app = client({ name: "tau-test-editor" })
    .onNotification("session/update", ({ params }) => {
      updates.push(params);
    })
    .onRequest("session/request_permission", ({ params }) => (side.permission ? side.permission(params) : { outcome: { outcome: "cancelled" } }));
  const read = side.readTextFile;
  if (read !== undefined) app = app.onRequest("fs/read_text_file", ({ params }) => read(params));
  const clientCapabilities: ClientCapabilities = read !== undefined ? { fs: { readTextFile: true } } : {};
  return app.connectWith(stream, async (ctx) => {
    const init = await ctx.request("initialize", { protocolVersion: 1, clientCapabilities });
    expect(init).toMatchObject({ protocolVersion: 1, agentCapabilities: { loadSession: true, promptCapabilities: { embeddedContext: true } }, agentInfo: { name: "tau" } });
    return op(ctx);
  });
}
