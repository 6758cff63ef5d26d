// Every command tau offers, declared explicitly (no filesystem discovery at start-up).
import Init from "./commands/init.js";
import Run from "./commands/run.js";
import SessionList from "./commands/session/list.js";
import SpecEvents from "./commands/spec/events.js";

export const COMMANDS = {
  init: Init,
  run: Run,
  "session:list": SessionList,
  "spec:events": SpecEvents,
};
