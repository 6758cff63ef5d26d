// Builds dist/ once before the suite so tests that spawn the real `tau` run the current sources.
import { buildAll } from "../../build.js";

export default async function setup(): Promise<void> {
  await buildAll();
}
