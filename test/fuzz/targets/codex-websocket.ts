import { codexDialect } from "../dialects/codex.js";
import { snapshotAmplification } from "../properties/ask-properties.js";
import { invalidUtf8Logging } from "../properties/log-properties.js";
import { WebSocketChannel } from "../infra/websocket-channel.js";
import { streamTarget } from "../stream-target.js";

/** The Codex app-server dialect (v2) on WebSocket `/` of `tau-gateway serve`. */
export default streamTarget({
  name: "Codex / (WebSocket)",
  command: "serve",
  args: ["--port", "0"],
  connect: (_gateway, baseUrl) => WebSocketChannel.open(`${baseUrl!.replace("http://", "ws://")}/`),
  dialect: codexDialect(),
  properties: [snapshotAmplification, invalidUtf8Logging("/")],
});
