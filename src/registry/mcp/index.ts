import type { DialectRegistry } from "../model.js";
import { mcpErrorEntries } from "./errors.js";
import { jsonRpcDefinitions, mcpFrames } from "./jsonrpc.js";
import { mcpMethodEntries, mcpNotificationEntries } from "./methods.js";
import { tauToolDefinitions } from "./tau-tools.js";
import { typeDefinitions } from "./types.js";

/**
 * The protocol revisions the gateway speaks, newest first: those @modelcontextprotocol/sdk 1.32
 * negotiates. initialize answers the client's revision when it is one of them, else the newest.
 */
export const MCP_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"] as const;
export const MCP_LATEST_PROTOCOL_VERSION = MCP_PROTOCOL_VERSIONS[0];

/**
 * The Model Context Protocol, server side: every message the gateway accepts from or sends to an
 * MCP client (a host such as Claude Desktop, Cursor or an agent framework), with the official
 * schema's type names for the shared types. One bundle, at the newest revision: the older ones
 * differ in members a client of theirs ignores (titles, structured content, elicitation).
 */
export const mcpRegistry: DialectRegistry<"mcp"> = {
  dialect: "mcp",
  title: "Model Context Protocol (server side)",
  versions: [MCP_LATEST_PROTOCOL_VERSION],
  definitions: { ...jsonRpcDefinitions, ...typeDefinitions, ...tauToolDefinitions },
  methods: mcpMethodEntries,
  notifications: mcpNotificationEntries,
  serverMessages: [],
  events: [],
  errors: mcpErrorEntries,
  frame: mcpFrames,
};

export { MCP_ERROR_CODES, type McpErrorName } from "./errors.js";
export { ANSWER_ACTIONS, APPROVAL_MODE_NAMES, REASONING_LEVELS, TAU_TOOLS, type TauToolName, type TauToolSpec } from "./tau-tools.js";
export { LOGGING_LEVELS } from "./types.js";
