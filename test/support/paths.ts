// Locations tests share: the repository root and the real `tau` entry point.
import { fileURLToPath } from "node:url";
import { join } from "node:path";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const TAU_BIN = join(REPO_ROOT, "bin", "tau.cjs");
