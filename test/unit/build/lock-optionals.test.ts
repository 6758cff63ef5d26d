// package-lock.json holds an entry for every optional dependency of every locked package — npm ci
// refuses a lock without one (SPEC-swarm, "The binding": the Iroh binding names platform packages
// the registry does not serve, which `npm install` leaves out).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

type Locked = { optionalDependencies?: Record<string, string>; os?: string[]; cpu?: string[] };

describe("package-lock.json", () => {
  it("[swarm.binding.lock-complete] lists every optional dependency of every locked package (os and cpu at least), so npm ci takes it", () => {
    const lock = JSON.parse(readFileSync(join(import.meta.dirname, "../../../package-lock.json"), "utf8")) as { packages: Record<string, Locked> };
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        const nested = `${path}/node_modules/${name}`;
        if (lock.packages[nested] === undefined && lock.packages[`node_modules/${name}`] === undefined) missing.push(`${name} (of ${path || "tau"})`);
      }
    }
    expect(missing, "npm install left these out of package-lock.json; add each with its version, os and cpu (SPEC-swarm, \"The binding\")").toEqual([]);
    expect(lock.packages["node_modules/@number0/iroh-win32-x64-msvc"]).toMatchObject({ optional: true, os: ["win32"], cpu: ["x64"] });
  });
});
