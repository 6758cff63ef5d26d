// The library every tau extension is written with (SPEC-extension-supervision).
export { Extension, ToolFailure } from "./extension.js";
export { AwaitedAnswers, type AwaitOptions } from "./answers.js";
export { RequestError, RequestRefusal } from "../protocol/index.js";
export type { AgentInitialization, CommandAnswer, CommandDefinition, Configuration, DeliveredEvent, DiscoverySnapshot, ExtensionIo, InterceptedEvent, InterceptVerdict, SessionInitialization, ToolContext, ToolDefinition, ToolResult } from "./extension.js";
