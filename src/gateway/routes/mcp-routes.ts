import type { McpServer } from "../../mcp/server.js";
import type { JsonRpcDialect } from "../../transports/call-observer.js";
import { serveMcpWebSocket } from "../../transports/mcp-websocket.js";
import type { GatewayDialect } from "../dialects.js";

/**
 * MCP as the gateway serves it: a WebSocket route (`/mcp/ws`, what `tau-gateway mcp --remote`
 * relays to).
 */
export function mcpGatewayDialect(server: McpServer, mount: { name: JsonRpcDialect; route: string }): GatewayDialect {
  return {
    name: mount.name,
    route: mount.route,
    serveWebSocket: (socket, { tenant, gate }) => serveMcpWebSocket(server, socket, { tenant, gate }),
  };
}
