import type { WebSocket } from "ws";
import type { CodexBridge } from "../codex/codex-bridge.js";
import { pumpWebSocketMessages } from "./websocket-messages.js";
import { attachCodexJsonRpc, type CodexJsonRpcOptions } from "./codex-jsonrpc.js";

/** The Codex app-server surface on one WebSocket: each text message is one JSON-RPC message. */
export function serveCodexWebSocket(bridge: CodexBridge, socket: WebSocket, options: CodexJsonRpcOptions): void {
  const connection = attachCodexJsonRpc(bridge, (text) => socket.send(text), options);
  // Messages are handled in arrival order; each may answer later (turn requests wait upstream).
  pumpWebSocketMessages(socket, connection);
}
