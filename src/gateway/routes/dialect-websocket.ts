import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import { carrierOfHeaders } from "../../shared/tracing.js";
import { serveWebSocket } from "../../transports/websocket-endpoint.js";
import type { GatewayDialect } from "../dialects.js";
import { pinoLog } from "../log.js";
import { PLUGIN } from "../plugin-names.js";
import { requestTenant } from "../request-tenant.js";

/**
 * A dialect's WebSocket route: one connection of the dialect per socket. The front door is the one
 * every route has — bearer token (`Authorization`), tenant, Origin allowlist, connection cap,
 * message size, keepalive, slow-consumer bound, drain — and each connection gets its own call
 * gates (its in-flight limit is per connection; metrics and spans under the dialect's name, under
 * the upgrade's trace context).
 */
const dialectWebSocket: FastifyPluginAsync<{ dialect: GatewayDialect }> = async (app, { dialect }) => {
  const { callGates } = app;
  app.get(dialect.route, { websocket: true }, (socket, request) => {
    const open = dialect.open({
      tenant: requestTenant(request),
      principal: request.principal,
      gate: callGates.connection(dialect.name, carrierOfHeaders(request.headers)),
      log: pinoLog(request.log),
    });
    serveWebSocket(socket, open, dialect.binaryReason);
  });
};

export const dialectWebSocketRoute = fp(dialectWebSocket, {
  name: "tau-gateway-route-dialect-websocket",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.services, PLUGIN.callGates, PLUGIN.websocket, PLUGIN.accessControl],
  decorators: { fastify: ["callGates", "websocketServer"], request: ["tenant", "principal"] },
});
