import { tauDialect } from "../dialects/tau.js";
import { WebSocketChannel } from "../infra/websocket-channel.js";
import { tauProperties } from "../properties/tau-properties.js";
import { streamTarget } from "../stream-target.js";

/** Tau envelopes on WebSocket `/tau` of `tau-gateway serve`. */
export default streamTarget({
  name: "/tau (WebSocket)",
  command: "serve",
  args: ["--port", "0"],
  connect: (_gateway, baseUrl) => WebSocketChannel.open(`${baseUrl!.replace("http://", "ws://")}/tau`),
  dialect: tauDialect(),
  properties: tauProperties,
});
