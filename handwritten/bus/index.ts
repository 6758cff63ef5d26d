// The publication pipeline: admission, interception, commit, broadcast, replay.
export { admit, publisherFromClass, tableClassOf } from "./admission.js";
export type { AdmissionResult, PublisherIdentity } from "./admission.js";
