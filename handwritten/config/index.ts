// Configuration: roots on disk and (later) layered, schema-validated configuration files.
export { resolveRoots, type Roots } from "./paths.js";
