import { MCP_ERROR_CODES } from "../../../registry/mcp/index.js";
import type { RelayDialect } from "../../../relay/relay-dialect.js";

/**
 * What `tau-gateway mcp --remote URL` must know of MCP to relay it to a gateway's `/mcp/ws`
 * WebSocket: its own messages carry `"jsonrpc":"2.0"`, the handshake is initialize then
 * notifications/initialized (both repeated on a new link), and a form the gateway put to the host
 * whose link was lost is withdrawn with notifications/cancelled. Nothing else is resumed: a tool
 * call lost with its link is answered -32012, and its turn runs on in its session.
 */
export const MCP_RELAY: RelayDialect = {
  name: "MCP",
  route: "/mcp/ws",
  jsonrpcMember: "include",
  unavailableCode: MCP_ERROR_CODES.upstream_unavailable,
  overloadedCode: MCP_ERROR_CODES.overloaded,
  invalidRequestCode: MCP_ERROR_CODES.invalid_request,
  answersOversized: true,
  handshakeRequest: "initialize",
  handshakeNotifications: ["notifications/initialized"],
  withdrawal: (id) => ({ method: "notifications/cancelled", params: { requestId: id, reason: "the link to the gateway was lost" } }),
  withdrawalMethod: "notifications/cancelled",
  // As `tau-gateway mcp` numbers its own requests to the host (mcp-jsonrpc.ts).
  firstRequestId: 0,
};
