import { acpDialect } from "../dialects/acp.js";
import { snapshotAmplification } from "../properties/ask-properties.js";
import { invalidUtf8Logging } from "../properties/log-properties.js";
import { WebSocketChannel } from "../infra/websocket-channel.js";
import { streamTarget } from "../stream-target.js";

/** The Agent Client Protocol (v1) on WebSocket `/acp` of `tau-gateway serve`. */
export default streamTarget({
  name: "ACP /acp (WebSocket)",
  command: "serve",
  args: ["--port", "0"],
  connect: (_gateway, baseUrl) => WebSocketChannel.open(`${baseUrl!.replace("http://", "ws://")}/acp`),
  dialect: acpDialect(),
  properties: [snapshotAmplification, invalidUtf8Logging("/acp")],
});
