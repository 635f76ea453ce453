import type { WebSocket } from "ws";
import type { AskBridge } from "../ask/ask-bridge.js";
import { pumpWebSocketMessages } from "./websocket-messages.js";
import { attachAskJsonRpc, type AskJsonRpcOptions } from "./ask-jsonrpc.js";

/** The Ask surface on one WebSocket: each text message is a JSON-RPC message or batch. */
export function serveAskWebSocket(bridge: AskBridge, socket: WebSocket, options: AskJsonRpcOptions): void {
  // A shared message's bytes go out as they are, as a text frame (no encoding per subscriber).
  const connection = attachAskJsonRpc(bridge, (message) => (typeof message === "string" ? socket.send(message) : socket.send(message.bytes, { binary: false })), options);
  // Each message takes its place in the connection's order on arrival (see ask-jsonrpc.ts).
  pumpWebSocketMessages(socket, connection);
}
