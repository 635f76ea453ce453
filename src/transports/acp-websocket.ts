import type { WebSocket } from "ws";
import type { AcpAgent } from "../acp/agent.js";
import { pumpWebSocketMessages } from "./websocket-messages.js";
import { attachAcpJsonRpc, type AcpJsonRpcOptions } from "./acp-jsonrpc.js";

/**
 * ACP on one WebSocket: each text message is one JSON-RPC message. When the socket closes, the
 * connection's turns still running get the agent's grace period, then are interrupted.
 */
export function serveAcpWebSocket(agent: AcpAgent, socket: WebSocket, options: AcpJsonRpcOptions): void {
  const connection = attachAcpJsonRpc(agent, (text) => socket.send(text), options);
  pumpWebSocketMessages(socket, connection, "ACP requires text messages");
}
