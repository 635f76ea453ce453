import { askDialect } from "../dialects/ask.js";
import { snapshotAmplification } from "../properties/ask-properties.js";
import { invalidUtf8Logging } from "../properties/log-properties.js";
import { WebSocketChannel } from "../infra/websocket-channel.js";
import { streamTarget } from "../stream-target.js";

/** Ask JSON-RPC on WebSocket `/rpc` of `tau-gateway serve`. */
export default streamTarget({
  name: "/rpc (WebSocket)",
  command: "serve",
  args: ["--port", "0"],
  connect: (_gateway, baseUrl) => WebSocketChannel.open(`${baseUrl!.replace("http://", "ws://")}/rpc`),
  dialect: askDialect(),
  properties: [snapshotAmplification, invalidUtf8Logging("/rpc")],
});
