// The Chromium the browser tests drive through playwright-core: Debian's /usr/bin/chromium where it
// is installed (.ci/run installs it), else the one packed inside the @sparticuz/chromium dev
// dependency, so `npm ci && npm test` needs no system browser and no download.
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "./paths.js";

const DEBIAN_CHROMIUM = "/usr/bin/chromium";

/** The path of a Chromium executable; unpacks the packaged one on first use (about 200 MB, once per version). */
export async function chromiumExecutable(): Promise<string> {
  if (existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  const pkg = join(REPO_ROOT, "node_modules", "@sparticuz", "chromium", "package.json");
  const { version } = JSON.parse(readFileSync(pkg, "utf8")) as { version: string };
  const dir = join(tmpdir(), `tau-sparticuz-chromium-${version}`);
  const exe = join(dir, "chromium");
  if (existsSync(exe)) return exe;
  // The package unpacks its brotli archives (binary, SwiftShader libraries, fonts) from its own files
  // into os.tmpdir() and reuses any `chromium` it finds there, even a half-written one. So unpack into
  // a private folder and publish it with one rename: concurrent runs never launch a partial binary.
  const staging = mkdtempSync(`${dir}.partial-`);
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = staging;
  try {
    const { default: packaged } = await import("@sparticuz/chromium");
    await packaged.executablePath();
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
  try {
    renameSync(staging, dir);
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(exe)) throw e; // not another run publishing first
  }
  return exe;
}
