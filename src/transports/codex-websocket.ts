import type { WebSocket } from "ws";
import type { CodexBridge } from "../codex/codex-bridge.js";
import { attachCodexJsonRpc, type CodexJsonRpcOptions } from "./codex-jsonrpc.js";

/** The Codex app-server surface on one WebSocket: each text message is one JSON-RPC message. */
export function serveCodexWebSocket(bridge: CodexBridge, socket: WebSocket, options: CodexJsonRpcOptions): void {
  const connection = attachCodexJsonRpc(bridge, (text) => socket.send(text), options);
  // Messages are handled in arrival order; each may answer later (turn requests wait upstream).
  socket.on("message", (data, isBinary) => {
    if (isBinary) {
      socket.close(1003, "JSON-RPC requires text messages");
      return;
    }
    void connection.receive(data.toString());
  });
  socket.on("close", () => connection.close());
  socket.on("error", () => connection.close());
}
