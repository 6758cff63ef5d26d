#!/usr/bin/env node
// The same entry as bin/tau.cjs (which the `tau` command runs), for callers that name this file.
import "./tau.cjs";
