import type { WebSocket } from "ws";
import type { McpServer } from "../mcp/server.js";
import { attachMcpJsonRpc, type McpJsonRpcOptions } from "./mcp-jsonrpc.js";
import { pumpWebSocketMessages } from "./websocket-messages.js";

/**
 * MCP on one WebSocket (what `tau-gateway mcp --remote` relays to): each text message is one
 * JSON-RPC message. When the socket closes, the turns its tool calls started run on.
 */
export function serveMcpWebSocket(server: McpServer, socket: WebSocket, options: McpJsonRpcOptions): void {
  const connection = attachMcpJsonRpc(server, (text) => socket.send(text), options);
  pumpWebSocketMessages(socket, connection, "MCP requires text messages");
}
