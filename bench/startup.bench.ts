// `tau --version` wall time beside `node -e 0`, interleaved in the same run.
import { fileURLToPath } from "node:url";
import { fmt, median, report, wallMs } from "./support.js";

const TAU = fileURLToPath(new URL("../bin/tau.cjs", import.meta.url));

export async function run(): Promise<void> {
  const rounds = 21;
  const tau: number[] = [];
  const node: number[] = [];
  wallMs(process.execPath, [TAU, "--version"]);
  wallMs(process.execPath, ["-e", "0"]);
  for (let i = 0; i < rounds; i++) {
    node.push(wallMs(process.execPath, ["-e", "0"]));
    tau.push(wallMs(process.execPath, [TAU, "--version"]));
  }
  const t = median(tau);
  const n = median(node);
  report(`tau --version median of ${rounds}`, `${fmt(t)} ms`, "node -e 0", `${fmt(n)} ms`, t / n);
}
