import WebSocket, { type WebSocketServer } from "ws";

/**
 * WebSocket ping keepalive. Every `intervalMs` each open client is pinged; one that has not
 * answered the previous ping (no pong since) is terminated. Dead peers and half-open TCP
 * connections would otherwise hold their resources (and their upstream connections) forever, and
 * the pings keep idle connections open through proxies. Returns a function that stops it.
 */
export function startKeepalive(server: WebSocketServer, intervalMs: number, onDead: (socket: WebSocket) => void): () => void {
  const answered = new WeakMap<WebSocket, boolean>();
  const track = (socket: WebSocket) => {
    answered.set(socket, true);
    socket.on("pong", () => answered.set(socket, true));
  };
  server.on("connection", track);

  const timer = setInterval(() => {
    for (const socket of server.clients) {
      // A closing socket is already on its way out (ws ends it after its close timeout).
      if (socket.readyState !== WebSocket.OPEN || !answered.has(socket)) continue;
      if (!answered.get(socket)) {
        onDead(socket);
        socket.terminate();
        continue;
      }
      answered.set(socket, false);
      socket.ping();
    }
  }, intervalMs);
  timer.unref();

  return () => {
    clearInterval(timer);
    server.off("connection", track);
  };
}
