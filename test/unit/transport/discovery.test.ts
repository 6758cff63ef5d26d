// Runtime discovery: stems, instance hand-off, metadata, and the bounded read-only scan.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  DAEMON_INSTANCE_ENV,
  InvalidInstanceError,
  METADATA_MAX_BYTES,
  SCAN_MAX_CANDIDATES,
  SCAN_MAX_ENTRIES,
  SCAN_TIME_BUDGET_MS,
  formatStem,
  instanceEnv,
  instanceFromEnv,
  mintInstance,
  pairPaths,
  parseStem,
  publishDaemonEndpoint,
  readPairMetadata,
  removeOwnPair,
  scanRuntime,
  writePairMetadata,
} from "../../../handwritten/transport/index.js";
import { cleanupAll, snapshotDir, tempHome } from "../../fixtures/transport/helpers.js";

afterAll(cleanupAll);

function runtimeDir(): string {
  const dir = join(tempHome(), "runtime");
  fs.mkdirSync(dir, { mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  return dir;
}

const hex = (n: number) => n.toString(16).padStart(16, "0");

describe("stems and instances", () => {
  it("mints 16 lowercase hex digits, different each time", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const v = mintInstance();
      expect(v).toMatch(/^[0-9a-f]{16}$/);
      seen.add(v);
    }
    expect(seen.size).toBe(200);
  });

  it("accepts only the canonical <pid>-<16 lowercase hex> form", () => {
    expect(parseStem("123-0123456789abcdef")).toEqual({ stem: "123-0123456789abcdef", pid: 123, instance: "0123456789abcdef" });
    expect(parseStem("4294967295-0123456789abcdef")?.pid).toBe(4294967295);
    for (const bad of [
      "0-0123456789abcdef",
      "0123-0123456789abcdef",
      "4294967296-0123456789abcdef",
      "12-0123456789ABCDEF",
      "12-0123456789abcde",
      "12-0123456789abcdef0",
      "12-0123456789abcdeg",
      "-0123456789abcdef",
      "12_0123456789abcdef",
      "12-0123456789abcdef.sock",
      " 12-0123456789abcdef",
    ]) {
      expect(parseStem(bad), bad).toBeUndefined();
    }
    expect(formatStem(7, "00000000000000ff")).toBe("7-00000000000000ff");
    expect(() => formatStem(0, "00000000000000ff")).toThrow(RangeError);
    expect(() => formatStem(7, "XYZ")).toThrow(RangeError);
    expect(pairPaths("/r", "7-00000000000000ff")).toEqual({ socket: "/r/7-00000000000000ff.sock", metadata: "/r/7-00000000000000ff.json" });
  });

  it("hands the launcher's instance to the daemon, mints for a direct launch, and refuses a malformed one", () => {
    const instance = mintInstance();
    const env = { ...instanceEnv(instance) };
    expect(env).toEqual({ [DAEMON_INSTANCE_ENV]: instance });
    expect(instanceFromEnv(env)).toBe(instance);
    expect(instanceFromEnv({})).toMatch(/^[0-9a-f]{16}$/);
    expect(() => instanceFromEnv({ [DAEMON_INSTANCE_ENV]: "ABCDEF0123456789" })).toThrow(InvalidInstanceError);
    expect(() => instanceFromEnv({ [DAEMON_INSTANCE_ENV]: "../../etc/passwd" })).toThrow(InvalidInstanceError);
    expect(() => instanceEnv("nope")).toThrow(RangeError);
  });

  it("a daemon endpoint uses the handed-over instance, publishes 0600 files and removes only its own pair", async () => {
    const dir = runtimeDir();
    const instance = mintInstance();
    fs.writeFileSync(join(dir, "neighbour.txt"), "keep");
    const endpoint = await publishDaemonEndpoint({ runtimeDir: dir, instance, version: "9.9.9", onConnection: () => undefined });
    expect(endpoint.stem).toBe(`${process.pid}-${instance}`);
    expect(fs.lstatSync(endpoint.socketPath).mode & 0o777).toBe(0o600);
    expect(fs.lstatSync(endpoint.metadataPath).mode & 0o777).toBe(0o600);
    const read = readPairMetadata(endpoint.metadataPath);
    expect(read.ok && read.metadata).toMatchObject({ pid: process.pid, instance, version: "9.9.9" });
    // No temp file is left behind.
    expect(fs.readdirSync(dir).sort()).toEqual([`${endpoint.stem}.json`, `${endpoint.stem}.sock`, "neighbour.txt"]);
    await endpoint.shutdown();
    expect(fs.readdirSync(dir)).toEqual(["neighbour.txt"]);
    // Removing an already-removed pair is fine.
    expect(() => removeOwnPair(dir, endpoint.stem)).not.toThrow();
  });
});

describe("metadata", () => {
  it("is written atomically with mode 0600 and holds only pid, instance, created_at and version", () => {
    const dir = runtimeDir();
    const instance = mintInstance();
    const path = writePairMetadata(dir, { pid: 42, instance, created_at: "2024-01-01T00:00:00.000Z", version: "1.2.3" });
    expect(path).toBe(join(dir, `42-${instance}.json`));
    expect(fs.lstatSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(path, "utf8"))).toEqual({ pid: 42, instance, created_at: "2024-01-01T00:00:00.000Z", version: "1.2.3" });
    expect(readPairMetadata(path)).toEqual({ ok: true, metadata: { pid: 42, instance, created_at: "2024-01-01T00:00:00.000Z", version: "1.2.3" } });
  });

  it("reads at most METADATA_MAX_BYTES: exactly at and one below are read, one above is too_large", () => {
    const dir = runtimeDir();
    const base = JSON.stringify({ pid: 5, instance: hex(5), created_at: "t", version: "v" });
    const padded = (size: number) => base + " ".repeat(size - base.length);
    for (const [size, expected] of [
      [METADATA_MAX_BYTES - 1, true],
      [METADATA_MAX_BYTES, true],
      [METADATA_MAX_BYTES + 1, false],
    ] as const) {
      const path = join(dir, `5-${hex(5)}.json`);
      fs.writeFileSync(path, padded(size));
      expect(fs.statSync(path).size).toBe(size);
      const read = readPairMetadata(path);
      expect(read.ok, `size ${size}`).toBe(expected);
      if (!expected) expect(read).toEqual({ ok: false, problem: "too_large" });
    }
  });

  it("reports unreadable shapes without touching them, and never blocks on a FIFO or follows a symlink", () => {
    const dir = runtimeDir();
    const cases: Array<[string, string | null, string]> = [
      ["1-0000000000000001.json", "{not json", "unparseable"],
      ["2-0000000000000002.json", JSON.stringify({ pid: 2, instance: hex(2), created_at: "t", version: "v", secret: "x" }), "invalid"],
      ["3-0000000000000003.json", JSON.stringify({ pid: "3", instance: hex(3), created_at: "t", version: "v" }), "invalid"],
      ["4-0000000000000004.json", null, "missing"],
    ];
    for (const [name, body, problem] of cases) {
      if (body !== null) fs.writeFileSync(join(dir, name), body);
      expect(readPairMetadata(join(dir, name))).toEqual({ ok: false, problem });
    }
    execFileSync("mkfifo", [join(dir, "5-0000000000000005.json")]);
    expect(readPairMetadata(join(dir, "5-0000000000000005.json"))).toEqual({ ok: false, problem: "not_regular" });
    fs.symlinkSync(join(dir, "1-0000000000000001.json"), join(dir, "6-0000000000000006.json"));
    expect(readPairMetadata(join(dir, "6-0000000000000006.json"))).toEqual({ ok: false, problem: "not_regular" });
    expect(fs.readFileSync(join(dir, "1-0000000000000001.json"), "utf8")).toBe("{not json");
  });
});

/** Binds real sockets named like pairs; they stay bound (and on disk) until `close`. */
async function bindSockets(dir: string, count: number, from = 1): Promise<{ close: () => Promise<void> }> {
  const servers: net.Server[] = [];
  for (let i = from; i < from + count; i++) {
    const s = net.createServer();
    await new Promise<void>((resolve) => s.listen(join(dir, `${i}-${hex(i)}.sock`), () => resolve()));
    servers.push(s);
  }
  return { close: () => Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r())))).then(() => undefined) };
}

describe("scanRuntime bounds", () => {
  it("returns only socket candidates with valid stems, read-only", async () => {
    const dir = runtimeDir();
    const sockets = await bindSockets(dir, 2);
    fs.writeFileSync(join(dir, `9-${hex(9)}.sock`), "a regular file named like a socket");
    fs.writeFileSync(join(dir, `1-${hex(1)}.json`), "{}");
    fs.writeFileSync(join(dir, "random.txt"), "x");
    fs.mkdirSync(join(dir, `8-${hex(8)}.sock`));
    fs.symlinkSync(join(dir, `1-${hex(1)}.sock`), join(dir, `7-${hex(7)}.sock`));
    const before = snapshotDir(dir);
    const scan = await scanRuntime(dir);
    expect(scan.truncated).toBe(false);
    expect(scan.entriesRead).toBe(before.length);
    expect(scan.candidates.map((c) => c.stem).sort()).toEqual([`1-${hex(1)}`, `2-${hex(2)}`]);
    expect(snapshotDir(dir)).toEqual(before);
    await sockets.close();
  });

  it("a missing runtime directory is an empty, complete scan and is not created", async () => {
    const dir = join(tempHome(), "runtime");
    expect(await scanRuntime(dir)).toEqual({ exists: false, candidates: [], entriesRead: 0, truncated: false });
    expect(fs.existsSync(dir)).toBe(false);
  });

  it(`reads at most SCAN_MAX_ENTRIES (${SCAN_MAX_ENTRIES}) raw entries: one below and exactly at are complete, one above is truncated`, async () => {
    for (const count of [SCAN_MAX_ENTRIES - 1, SCAN_MAX_ENTRIES, SCAN_MAX_ENTRIES + 1]) {
      const dir = runtimeDir();
      for (let i = 0; i < count; i++) fs.writeFileSync(join(dir, `f${i}`), "");
      const scan = await scanRuntime(dir);
      expect(scan.entriesRead, `count ${count}`).toBe(Math.min(count, SCAN_MAX_ENTRIES));
      expect(scan.truncated, `count ${count}`).toBe(count > SCAN_MAX_ENTRIES ? "entries" : false);
      expect(fs.readdirSync(dir).length).toBe(count);
    }
  });

  it(`returns at most SCAN_MAX_CANDIDATES (${SCAN_MAX_CANDIDATES}) candidates: one below and exactly at are complete, one above is truncated`, async () => {
    for (const count of [SCAN_MAX_CANDIDATES - 1, SCAN_MAX_CANDIDATES, SCAN_MAX_CANDIDATES + 1]) {
      const dir = runtimeDir();
      const sockets = await bindSockets(dir, count);
      const scan = await scanRuntime(dir);
      expect(scan.candidates.length, `count ${count}`).toBe(Math.min(count, SCAN_MAX_CANDIDATES));
      expect(scan.truncated, `count ${count}`).toBe(count > SCAN_MAX_CANDIDATES ? "candidates" : false);
      expect(fs.readdirSync(dir).length).toBe(count);
      await sockets.close();
    }
  });

  it(`stops once SCAN_TIME_BUDGET_MS (${SCAN_TIME_BUDGET_MS}) has elapsed: one below and exactly at continue, one above stops`, async () => {
    const dir = runtimeDir();
    const sockets = await bindSockets(dir, 3);
    for (const elapsed of [SCAN_TIME_BUDGET_MS - 1, SCAN_TIME_BUDGET_MS, SCAN_TIME_BUDGET_MS + 1]) {
      let calls = 0;
      // The clock reads 0 at the start, then `elapsed` ever after.
      const now = () => (calls++ === 0 ? 0 : elapsed);
      const scan = await scanRuntime(dir, { now });
      if (elapsed > SCAN_TIME_BUDGET_MS) {
        expect(scan.truncated).toBe("time");
        expect(scan.candidates).toEqual([]);
      } else {
        expect(scan.truncated).toBe(false);
        expect(scan.candidates.length).toBe(3);
      }
    }
    await sockets.close();
  });

  it("fails closed on a runtime directory with the wrong mode instead of scanning it", async () => {
    const dir = runtimeDir();
    fs.chmodSync(dir, 0o755);
    await expect(scanRuntime(dir)).rejects.toMatchObject({ name: "RuntimeDirError", problem: "wrong_mode" });
  });
});
