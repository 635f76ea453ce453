import { carrierOfHeaders } from "../../shared/tracing.js";
import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import { serveAcpWebSocket } from "../../transports/acp-websocket.js";
import { PLUGIN } from "../plugin-names.js";
import { requestTenant } from "./ask-http.js";

/**
 * WebSocket `/acp`: an ACP agent connection per socket, for clients that reach the gateway over
 * the network rather than spawning `tau-gateway acp`. Authentication, tenants, the connection and
 * message limits and the drain apply as on every route; each connection has its own gates.
 */
const acpWebSocket: FastifyPluginAsync = async (app) => {
  const { acpAgent: agent, callGates } = app;
  app.get("/acp", { websocket: true }, (socket, request) => {
    serveAcpWebSocket(agent, socket, { tenant: requestTenant(request), gate: callGates.connection("acp", carrierOfHeaders(request.headers)) });
  });
};

export const acpWebSocketRoute = fp(acpWebSocket, {
  name: "tau-gateway-route-acp-websocket",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.services, PLUGIN.callGates, PLUGIN.websocket, PLUGIN.accessControl],
  decorators: { fastify: ["acpAgent", "callGates", "websocketServer"], request: ["tenant"] },
});
