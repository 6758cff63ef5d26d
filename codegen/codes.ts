// Every coded codegen error, in one place. A code is stable: it names one rule, whatever the wording
// of the message around it, so scripts and people can search for it. The C range belongs to codegen
// (the CLI's errors use E codes). Codes are never reused for another rule.
export const CODEGEN_CODES = {
  // Publication sites (SPEC-event-publication, "Publishers in the code").
  "TAU-C010": "a publication, directed send, consumer or handler site names an event that is not in the registry",
  "TAU-C011": "a folder publishes an event that none of its publisher classes may publish",
  "TAU-C012": "a folder with no publisher class publishes an event",
  "TAU-C013": "an event of persistence `directed` is published through the bus instead of sent with a direct message",
  // Directed sends.
  "TAU-C020": "a folder that may not send direct messages sends one",
  "TAU-C021": "a direct message carries an event that is not a directed event of the sender's publisher class",
  // Imports (ARCH-tau, "Dependency rule").
  "TAU-C030": "an import crosses the dependency rule",
  "TAU-C031": "an import leaves handwritten/ and generated/",
  "TAU-C032": "a folder of handwritten/ has no row in the dependency rule",
  // Post-commit consumers (SPEC-event-publication, "Consumers and successors").
  "TAU-C040": "a consumer declares a successor the authority matrix does not list for the event",
  "TAU-C041": "the consumers of an event do not declare a successor the authority matrix lists for it",
  "TAU-C042": "no consumer handles an event whose matrix row lists successors the harness publishes",
  "TAU-C043": "an onCommitted or consume site handles an event its consumer (any consumer, for onCommitted) does not declare",
  "TAU-C044": "a consumer declares an event that no onCommitted site, nor a consume site of that consumer, handles",
  "TAU-C045": "handwritten/harness/consumers.ts is missing or not one literal table",
  // The record tables the checks read.
  "TAU-C090": "a conformance table in a record is missing or malformed",
  "TAU-C091": "a named exception matches nothing any more (remove it)",
} as const;

export type CodegenCode = keyof typeof CODEGEN_CODES;
