// The worker-thread side of scanInWorker (index.ts): one scan of a handwritten/ tree, posted back
// as plain data.
import { parentPort, workerData } from "node:worker_threads";
import { scanHere } from "./index.js";

const { dir, reportRoot } = workerData as { dir: string; reportRoot: string };
parentPort?.postMessage(scanHere(dir, reportRoot));
