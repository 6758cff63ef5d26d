// Every command tau offers, declared explicitly (no filesystem discovery at start-up).
import { PrintPrompt, PrintSystemPrompt, PrintTools } from "./commands/dev/print.js";
import Acp from "./commands/acp.js";
import AgentList from "./commands/agent/list.js";
import AgentTrace from "./commands/agent/trace.js";
import Attach from "./commands/attach.js";
import Init from "./commands/init.js";
import McpAdd from "./commands/mcp/add.js";
import McpImport from "./commands/mcp/import.js";
import McpList from "./commands/mcp/list.js";
import McpLogin from "./commands/mcp/login.js";
import McpLogout from "./commands/mcp/logout.js";
import McpRemove from "./commands/mcp/remove.js";
import ProviderAdd from "./commands/provider/add.js";
import ProviderList from "./commands/provider/list.js";
import ProviderLogin from "./commands/provider/login.js";
import ProviderRemove from "./commands/provider/remove.js";
import Resume from "./commands/resume.js";
import Run from "./commands/run.js";
import SessionList from "./commands/session/list.js";
import SessionFork from "./commands/session/fork.js";
import SessionRm from "./commands/session/rm.js";
import SessionStats from "./commands/session/stats.js";
import SpecEvents from "./commands/spec/events.js";
import SwarmCredential from "./commands/swarm/credential.js";
import SwarmKey from "./commands/swarm/key.js";
import SwarmServe from "./commands/swarm/serve.js";
import SwarmStatus from "./commands/swarm/status.js";

export const COMMANDS = {
  "dev:print-prompt": PrintPrompt,
  "dev:print-system-prompt": PrintSystemPrompt,
  "dev:print-tools": PrintTools,
  acp: Acp,
  "agent:list": AgentList,
  "agent:trace": AgentTrace,
  attach: Attach,
  init: Init,
  "mcp:add": McpAdd,
  "mcp:import": McpImport,
  "mcp:list": McpList,
  "mcp:login": McpLogin,
  "mcp:logout": McpLogout,
  "mcp:remove": McpRemove,
  "provider:add": ProviderAdd,
  "provider:list": ProviderList,
  "provider:login": ProviderLogin,
  "provider:remove": ProviderRemove,
  resume: Resume,
  run: Run,
  "session:list": SessionList,
  "session:fork": SessionFork,
  "session:rm": SessionRm,
  "session:stats": SessionStats,
  "spec:events": SpecEvents,
  "swarm:credential": SwarmCredential,
  "swarm:key": SwarmKey,
  "swarm:serve": SwarmServe,
  "swarm:status": SwarmStatus,
};
