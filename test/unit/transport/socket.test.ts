// The unix socket server and client: 0700 runtime directory, 0600 socket, fail-closed directory checks.
import * as fs from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  ConnectError,
  ListenError,
  MAX_SOCKET_PATH_BYTES,
  RuntimeDirError,
  checkRuntimeDir,
  connectUnix,
  ensureRuntimeDir,
  listenUnix,
} from "../../../handwritten/transport/index.js";
import { cleanupAll, tempHome } from "../../fixtures/transport/helpers.js";

afterAll(cleanupAll);

const mode = (path: string) => fs.lstatSync(path).mode & 0o777;
const isRoot = typeof process.geteuid === "function" && process.geteuid() === 0;

describe("unix socket server", () => {
  it("[transport.socket.mode-0600] listens on a 0600 socket inside a 0700 runtime directory, even under a permissive umask", async () => {
    const runtime = join(tempHome(), "runtime");
    const previous = process.umask(0);
    let server;
    try {
      server = await listenUnix(join(runtime, "1-00000000000000aa.sock"), { onConnection: () => undefined });
    } finally {
      process.umask(previous);
    }
    expect(fs.lstatSync(runtime).isDirectory()).toBe(true);
    expect(mode(runtime)).toBe(0o700);
    expect(fs.lstatSync(server.path).isSocket()).toBe(true);
    expect(mode(server.path)).toBe(0o600);
    // The umask is restored after listening.
    expect(process.umask()).toBe(previous);
    const conn = await connectUnix(server.path, { timeoutMs: 2000 });
    expect(conn.isOpen).toBe(true);
    conn.destroy();
    await server.close();
    expect(fs.existsSync(server.path)).toBe(false);
  });

  it("[transport.socket.mode-0600] an existing runtime directory with another mode fails closed and is left as it was", async () => {
    for (const wrong of [0o755, 0o711, 0o750, 0o500]) {
      const runtime = join(tempHome(), "runtime");
      fs.mkdirSync(runtime, { mode: 0o700 });
      fs.chmodSync(runtime, wrong);
      const err = await listenUnix(join(runtime, "1-00000000000000ab.sock"), { onConnection: () => undefined }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RuntimeDirError);
      expect((err as RuntimeDirError).problem).toBe("wrong_mode");
      expect((err as Error).message).toContain(`has mode 0${wrong.toString(8)}, expected 0700`);
      expect(mode(runtime)).toBe(wrong);
      fs.chmodSync(runtime, 0o700);
      expect(fs.readdirSync(runtime)).toEqual([]);
      expect(() => checkRuntimeDir(runtime)).not.toThrow();
    }
  });

  it("[transport.socket.mode-0600] a symlinked, non-directory or foreign-owned runtime directory fails closed", async () => {
    const home = tempHome();
    const real = join(home, "real");
    fs.mkdirSync(real, { mode: 0o700 });
    fs.symlinkSync(real, join(home, "link"));
    expect(() => ensureRuntimeDir(join(home, "link"))).toThrow(expect.objectContaining({ problem: "symlink" }));
    fs.writeFileSync(join(home, "file"), "");
    expect(() => ensureRuntimeDir(join(home, "file"))).toThrow(expect.objectContaining({ problem: "not_directory" }));
    if (isRoot) {
      const foreign = join(home, "foreign");
      fs.mkdirSync(foreign, { mode: 0o700 });
      fs.chownSync(foreign, 4242, 4242);
      expect(() => ensureRuntimeDir(foreign)).toThrow(expect.objectContaining({ problem: "wrong_owner" }));
      expect(() => checkRuntimeDir(foreign)).toThrow(RuntimeDirError);
    }
  });

  it("checkRuntimeDir creates nothing when the directory is missing", () => {
    const runtime = join(tempHome(), "runtime");
    expect(checkRuntimeDir(runtime)).toBe(false);
    expect(fs.existsSync(runtime)).toBe(false);
  });

  it("refuses a socket path longer than the platform limit and an existing path", async () => {
    const runtime = join(tempHome(), "runtime");
    const long = join(runtime, "x".repeat(MAX_SOCKET_PATH_BYTES));
    await expect(listenUnix(long, { onConnection: () => undefined })).rejects.toBeInstanceOf(ListenError);
    const path = join(runtime, "1-00000000000000ac.sock");
    const server = await listenUnix(path, { onConnection: () => undefined });
    await expect(listenUnix(path, { onConnection: () => undefined })).rejects.toThrow(/already exists/);
    await server.close();
  });

  it("client connects fail with typed reasons", async () => {
    const runtime = join(tempHome(), "runtime");
    const missing = await connectUnix(join(runtime, "nope.sock")).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ConnectError);
    expect((missing as ConnectError).failure).toBe("not_found");
    fs.mkdirSync(runtime, { mode: 0o700 });
    fs.writeFileSync(join(runtime, "plain.sock"), "");
    const refused = await connectUnix(join(runtime, "plain.sock")).catch((e: unknown) => e);
    expect((refused as ConnectError).failure).toBe("refused");
  });
});
