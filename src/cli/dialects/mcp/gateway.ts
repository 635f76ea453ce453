import type { FastifyPluginAsync } from "fastify";
import type { McpServer } from "../../../mcp/server.js";
import type { JsonRpcDialect } from "../../../transports/call-observer.js";
import { attachMcpJsonRpc } from "../../../transports/mcp-jsonrpc.js";
import type { DialectRoutesContext, GatewayDialect } from "../../../gateway/dialects.js";
import { mcpHttpRoute } from "./http-route.js";

/** Where MCP's Streamable HTTP transport is served. */
export const MCP_HTTP_ROUTE = "/mcp";

/**
 * MCP as the gateway serves it: Streamable HTTP at `/mcp` (what MCP hosts that speak HTTP
 * connect to), and a WebSocket route (`/mcp/ws`, what `tau-gateway mcp --remote` relays to).
 */
export function mcpGatewayDialect(server: McpServer, mount: { name: JsonRpcDialect; route: string }): GatewayDialect {
  const routes: FastifyPluginAsync<DialectRoutesContext> = async (app, context) => {
    app.register(mcpHttpRoute, { ...context, server, route: MCP_HTTP_ROUTE });
  };
  return {
    name: mount.name,
    route: mount.route,
    // When the socket closes, the turns its tool calls started run on.
    open: ({ tenant, principal, gate }) => (send, transport) => attachMcpJsonRpc(server, send, { tenant, principal, gate, transport }),
    binaryReason: "MCP requires text messages",
    routes,
    routeLabels: [MCP_HTTP_ROUTE],
    // A browser client reads its Streamable HTTP session's id from the answers, and ends it with DELETE.
    exposedHeaders: ["Mcp-Session-Id"],
  };
}
