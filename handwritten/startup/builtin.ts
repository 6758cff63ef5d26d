// Loading one of node's built-in modules on first use rather than at start-up (node:crypto, for
// one, costs a process 6-13 ms to initialise, node:child_process about 7). Synchronous, because a dynamic import() fails in a
// code-cached bundle. createRequire only needs an absolute base, which a built-in never resolves
// against, so this works the same from source, from a bundle and from a test fixture.
import { createRequire } from "node:module";

const requireFromRoot = createRequire("/");

/** node's `node:<name>` module, loaded now if it was not yet. */
export function builtin<T>(name: "child_process" | "crypto" | "https" | "tls"): T {
  return requireFromRoot(`node:${name}`) as T;
}
