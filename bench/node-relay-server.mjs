// The least a Node.js WebSocket relay can do: each client connection gets its own upstream
// connection, and every frame is passed on as received, unparsed and unchecked, with the same `ws`
// library the gateway uses. `npm run bench` runs it beside nginx so the relay rows show how much of
// the gateway's cost is Node.js and `ws` themselves. Plain JavaScript, run by `node` itself.
//
//   node bench/node-relay-server.mjs ws://127.0.0.1:UPSTREAM_PORT
import WebSocket, { WebSocketServer } from "ws";

const upstreamUrl = process.argv[2];
if (!upstreamUrl) throw new Error("usage: node bench/node-relay-server.mjs UPSTREAM_URL");

const server = new WebSocketServer({ host: "127.0.0.1", port: 0 }, () => {
  process.stderr.write(`node relay listening on ws://127.0.0.1:${server.address().port}/\n`);
});

server.on("connection", (client) => {
  const upstream = new WebSocket(upstreamUrl, { perMessageDeflate: false });
  /** Frames the client sends before the upstream is open, in order. */
  const waiting = [];
  upstream.on("open", () => {
    for (const [data, isBinary] of waiting) upstream.send(data, { binary: isBinary });
    waiting.length = 0;
  });
  client.on("message", (data, isBinary) => {
    if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
    else waiting.push([data, isBinary]);
  });
  upstream.on("message", (data, isBinary) => {
    if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary });
  });
  client.on("close", () => upstream.close());
  upstream.on("close", () => client.close());
  client.on("error", () => upstream.terminate());
  upstream.on("error", () => client.terminate());
});

process.on("SIGTERM", () => process.exit(0));
