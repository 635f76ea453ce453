import { carrierOfHeaders } from "../../shared/tracing.js";
import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import type { AskJsonRpcOptions } from "../../transports/ask-jsonrpc.js";
import { serveAskWebSocket } from "../../transports/ask-websocket.js";
import { PLUGIN } from "../plugin-names.js";
import { requestTenant } from "./ask-http.js";

export interface AskWebSocketRouteOptions {
  /** Framing of every connection; the tenant comes from the request, the gate from `callGates`. */
  jsonrpc: Pick<AskJsonRpcOptions, "jsonrpcMember" | "maxBatch">;
}

/** WebSocket `/rpc`: an Ask JSON-RPC connection per socket, each with its own gates (its in-flight limit is per connection). */
const askWebSocket: FastifyPluginAsync<AskWebSocketRouteOptions> = async (app, options) => {
  const { askBridge: bridge, callGates } = app;
  app.get("/rpc", { websocket: true }, (socket, request) => {
    serveAskWebSocket(bridge, socket, { ...options.jsonrpc, tenant: requestTenant(request), gate: callGates.connection("ask", carrierOfHeaders(request.headers)) });
  });
};

export const askWebSocketRoute = fp(askWebSocket, {
  name: "tau-gateway-route-ask-websocket",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.services, PLUGIN.callGates, PLUGIN.websocket, PLUGIN.accessControl],
  decorators: { fastify: ["askBridge", "callGates", "websocketServer"], request: ["tenant"] },
});
