import { carrierOfHeaders } from "../../shared/tracing.js";
import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import { serveCodexWebSocket } from "../../transports/codex-websocket.js";
import { pinoLog } from "../log.js";
import { PLUGIN } from "../plugin-names.js";
import { requestTenant } from "./ask-http.js";

/**
 * WebSocket `/`: a Codex app-server connection per socket (the Codex terminal UI refuses a URL
 * with a path). The front door is the one every route has — bearer token (`Authorization`),
 * tenant, Origin allowlist, connection cap, message size, keepalive, slow-consumer bound, drain —
 * and each connection gets the same call gates as `/rpc` (metrics under dialect codex, in-flight
 * limit, drain).
 */
const codexWebSocket: FastifyPluginAsync = async (app) => {
  const { codexBridge: bridge, callGates } = app;
  app.get("/", { websocket: true }, (socket, request) => {
    serveCodexWebSocket(bridge, socket, { tenant: requestTenant(request), gate: callGates.connection("codex", carrierOfHeaders(request.headers)), log: pinoLog(request.log) });
  });
};

export const codexWebSocketRoute = fp(codexWebSocket, {
  name: "tau-gateway-route-codex-websocket",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.services, PLUGIN.callGates, PLUGIN.websocket, PLUGIN.accessControl],
  decorators: { fastify: ["codexBridge", "callGates", "websocketServer"], request: ["tenant"] },
});
