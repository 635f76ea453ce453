import type { WebSocket } from "ws";
import { MESSAGES_IN_FLIGHT_BOUND, READ_ON_IN_FLIGHT } from "./in-flight-bound.js";
import type { JsonRpcEndpoint, OpenEndpoint } from "./jsonrpc-endpoint.js";
import { WEBSOCKET_TRANSPORT } from "./outbound-policy.js";

/**
 * Any dialect's JSON-RPC endpoint on one WebSocket: each text message is one message (or an Ask
 * batch). A message shared by many connections goes out as its bytes, as a text frame (no
 * encoding per subscriber). `binaryReason` closes a socket that sends a binary message.
 */
export function serveWebSocket<Endpoint extends JsonRpcEndpoint>(socket: WebSocket, open: OpenEndpoint<Endpoint>, binaryReason?: string): Endpoint {
  const endpoint = open((message) => (typeof message === "string" ? socket.send(message) : socket.send(message.bytes, { binary: false })), WEBSOCKET_TRANSPORT);
  pumpWebSocketMessages(socket, endpoint, binaryReason);
  return endpoint;
}

/**
 * One JSON-RPC connection on one WebSocket, for every dialect: each text message goes to
 * `receive` in arrival order (the connection orders its work from there); a binary message is not
 * a JSON-RPC message, so the socket is closed with 1003 (unsupported data) and `binaryReason`. The
 * connection is closed when the socket closes or fails. While MESSAGES_IN_FLIGHT_BOUND messages
 * are unsettled the socket is not read (in-flight-bound.ts): a flood waits in the client's TCP
 * window, not in our memory.
 */
export function pumpWebSocketMessages(
  socket: WebSocket,
  connection: { receive(text: string): Promise<void>; close(): unknown },
  binaryReason = "JSON-RPC requires text messages",
): void {
  let inFlight = 0;
  const settled = () => {
    inFlight--;
    if (socket.isPaused && inFlight <= READ_ON_IN_FLIGHT && socket.readyState === socket.OPEN) socket.resume();
  };
  socket.on("message", (data, isBinary) => {
    if (isBinary) {
      socket.close(1003, binaryReason);
      return;
    }
    inFlight++;
    // Messages already read may still arrive after the pause; they are handled like the rest.
    if (inFlight >= MESSAGES_IN_FLIGHT_BOUND && !socket.isPaused) socket.pause();
    // A rejection stays unhandled, as before it was counted: receive() answers its own failures.
    void connection.receive(data.toString()).then(settled, (err: unknown) => {
      settled();
      throw err;
    });
  });
  socket.on("close", () => void connection.close());
  socket.on("error", () => void connection.close());
}
