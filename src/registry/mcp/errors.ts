import { errorEntryOf, GATEWAY_ERROR_CODES, JSONRPC_ERROR_CODES } from "../error-codes.js";
import type { ErrorCodeEntry } from "../model.js";

/**
 * JSON-RPC error codes on the MCP surface: the reserved range, MCP's own (-32002 resource not
 * found, as the specification's resources page says) and the gateway's codes for what MCP servers
 * elsewhere never meet (MCP allows any other integer). A tool that fails is no protocol error: its
 * result says so with `isError` (see docs/mcp.md).
 */
export const MCP_ERROR_CODES = {
  ...JSONRPC_ERROR_CODES,
  resource_not_found: -32002,
  ...GATEWAY_ERROR_CODES,
} as const;

export type McpErrorName = keyof typeof MCP_ERROR_CODES;

const entry = errorEntryOf(MCP_ERROR_CODES);

export const mcpErrorEntries: ErrorCodeEntry[] = [
  entry("parse_error", "The message is not valid JSON; answered with id null."),
  entry("invalid_request", "Not a JSON-RPC 2.0 request (no jsonrpc member, a null id, a batch), or a request before initialize."),
  entry("method_not_found", "The method is not part of the surface; an unknown notification is ignored instead."),
  entry("invalid_params", "Params are missing or mistyped, or name a tool that does not exist; the message names the field."),
  entry("internal_error", "An unexpected failure while handling the request."),
  entry("resource_not_found", "No such resource: an unknown URI, or a session that does not exist for the caller's tenant; data names the uri."),
  entry("forbidden", "The caller's role in the session (owner, controller, observer) does not allow the action: an observer prompts, steers, interrupts, closes or answers, or someone other than the owner or an operator grants a role. The message names the method, the principal, its role and the action; data has them as fields.", true),
  entry("busy", "The request cannot be taken now.", true),
  entry("upstream_unavailable", "The Tau host cannot be reached, or the gateway is shutting down.", true),
  entry("overloaded", "A gateway limit was reached; retry later.", true),
];
