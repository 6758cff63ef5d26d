// Every command tau offers, declared explicitly (no filesystem discovery at start-up).
import SpecEvents from "./commands/spec/events.js";

export const COMMANDS = {
  "spec:events": SpecEvents,
};
