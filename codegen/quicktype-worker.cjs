// Runs quicktype-core on a worker thread, so codegen writes the other-language contracts on a
// second core while the main thread compiles the TypeSpec sources and the validators
// (codegen/polyglot.ts starts it and sends the rewritten schemas). Plain CommonJS on purpose: a
// worker thread starts without its parent's TypeScript loader (tsx, vitest), and quicktype-core's
// CommonJS build loads in about half the time of its ES module build.
"use strict";
const { parentPort } = require("node:worker_threads");
const quicktype = require("quicktype-core");

/**
 * One job: `{roots, schemas: [id, schema][], addressPrefix, runs: [{lang, rendererOptions}]}`.
 * The answer: `{outputs: string[][]}` (each run's lines, in order) or `{error}`.
 */
parentPort.once("message", async (job) => {
  try {
    const schemas = new Map(job.schemas);
    class ViewStore extends quicktype.JSONSchemaStore {
      async fetch(address) {
        return schemas.get(address.slice(address.lastIndexOf("/") + 1));
      }
    }
    const input = new quicktype.JSONSchemaInput(new ViewStore());
    for (const root of job.roots) await input.addSource({ name: root, uris: [`${job.addressPrefix}${root}.json`] });
    const inputData = new quicktype.InputData();
    inputData.addInput(input);
    // One input for every language: its schemas are read once.
    const outputs = [];
    for (const run of job.runs) outputs.push((await quicktype.quicktype({ inputData, lang: run.lang, rendererOptions: run.rendererOptions })).lines);
    parentPort.postMessage({ outputs });
  } catch (err) {
    parentPort.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
});
