import type {
  ClientCancelledParams,
  InitializeParams,
  InitializeResult,
  LoggingSetLevelParams,
  LoggingSetLevelResult,
  PingResult,
} from "../../../generated/mcp-v2025-11-25.js";
import { MCP_LATEST_PROTOCOL_VERSION, MCP_PROTOCOL_VERSIONS } from "../../registry/mcp/index.js";
import { callKey } from "../client-state.js";
import type { McpMethodContext } from "../context.js";
import { mcpError } from "../errors.js";

const SUPPORTED: ReadonlySet<string> = new Set(MCP_PROTOCOL_VERSIONS);

/** What the gateway tells a host about itself, for the model. */
const INSTRUCTIONS =
  "Tau coding-agent sessions. Start one with the tau tool (a prompt, optionally cwd, approvalMode, reasoning) and continue it with tau-reply; " +
  "tau-sessions lists your sessions, tau-history reads one, tau-interrupt stops its turn and tau-answer decides what it waits for. " +
  "Each session's transcript is the resource tau://session/{sessionId}.";

/**
 * initialize: the client's revision when the gateway speaks it, else the newest (the client then
 * decides whether to go on). Tools, resources (subscribable) and logging are offered; the tool
 * list follows what the connection's sessions wait for (tau-answer), the resource list the tenant's sessions.
 */
export async function initialize({ services, client }: McpMethodContext, params: InitializeParams): Promise<InitializeResult> {
  if (client.initialized) throw mcpError("invalid_request", "Invalid Request: initialize was already done on this connection");
  client.protocolVersion = SUPPORTED.has(params.protocolVersion) ? params.protocolVersion : MCP_LATEST_PROTOCOL_VERSION;
  client.capabilities = params.capabilities;
  client.info = params.clientInfo;
  client.initialized = true;
  return {
    protocolVersion: client.protocolVersion,
    capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, logging: {} },
    serverInfo: { name: "tau-gateway", title: "Tau (tau-gateway)", version: services.serverVersion },
    instructions: INSTRUCTIONS,
  };
}

export async function ping(): Promise<PingResult> {
  return {};
}

/** logging/setLevel: log messages about this connection's sessions and the gateway's hosts, from `level` up. */
export async function setLevel({ client }: McpMethodContext, params: LoggingSetLevelParams): Promise<LoggingSetLevelResult> {
  client.logLevel = params.level;
  return {};
}

/** notifications/initialized: nothing to do; the connection operates once initialize is answered. */
export function initialized(): void {}

/** notifications/cancelled: the tools/call it names stops — its turn is interrupted; other requests finish unheeded. */
export function cancelled({ client }: McpMethodContext, params: ClientCancelledParams): void {
  if (params.requestId === undefined) return;
  client.calls.get(callKey(params.requestId))?.cancel(params.reason);
}

export function ignored(): void {}
