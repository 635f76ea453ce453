import type { WebSocket } from "ws";

/**
 * One JSON-RPC connection on one WebSocket, for every dialect: each text message goes to
 * `receive` in arrival order (the connection orders its work from there); a binary message is not
 * a JSON-RPC message, so the socket is closed with 1003 (unsupported data) and `binaryReason`. The
 * connection is closed when the socket closes or fails.
 */
export function pumpWebSocketMessages(
  socket: WebSocket,
  connection: { receive(text: string): Promise<void>; close(): unknown },
  binaryReason = "JSON-RPC requires text messages",
): void {
  socket.on("message", (data, isBinary) => {
    if (isBinary) {
      socket.close(1003, binaryReason);
      return;
    }
    void connection.receive(data.toString());
  });
  socket.on("close", () => void connection.close());
  socket.on("error", () => void connection.close());
}
