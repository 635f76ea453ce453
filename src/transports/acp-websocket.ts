import type { WebSocket } from "ws";
import type { AcpAgent } from "../acp/agent.js";
import { attachAcpJsonRpc, type AcpJsonRpcOptions } from "./acp-jsonrpc.js";

/**
 * ACP on one WebSocket: each text message is one JSON-RPC message. When the socket closes, the
 * connection's turns still running get the agent's grace period, then are interrupted.
 */
export function serveAcpWebSocket(agent: AcpAgent, socket: WebSocket, options: AcpJsonRpcOptions): void {
  const connection = attachAcpJsonRpc(agent, (text) => socket.send(text), options);
  socket.on("message", (data, isBinary) => {
    if (isBinary) {
      socket.close(1003, "ACP requires text messages");
      return;
    }
    void connection.receive(data.toString());
  });
  socket.on("close", () => void connection.close());
  socket.on("error", () => void connection.close());
}
