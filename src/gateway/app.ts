import websocket from "@fastify/websocket";
import Fastify, { type FastifyInstance } from "fastify";
import { composeAskGates, inflightLimitGate } from "../transports/ask-call-gates.js";
import { newPassthroughCounters, type PassthroughCounters } from "../transports/tau-passthrough.js";
import { SessionTenants } from "../transports/tau-tenancy.js";
import { accessControl } from "./auth/access-control.js";
import { clientSocketErrorHandler, installClientSocketPolicies } from "./client-sockets.js";
import { DEFAULT_MAX_MESSAGE_BYTES, type GatewayConfig } from "./config.js";
import { gatewayWebSocketClass } from "./gateway-websocket.js";
import { resolveLimits } from "./limits.js";
import { GatewayMetrics } from "./metrics.js";
import { metricsRoute } from "./routes/metrics.js";
import { loggerOptions } from "./log-options.js";
import { requestIdGenerator, requestIdHeader } from "./request-id.js";
import { installDrain } from "./drain-plugin.js";
import { askEventsRoute } from "./routes/ask-events.js";
import { askHttpRoute } from "./routes/ask-http.js";
import { healthRoutes } from "./routes/health.js";
import { schemaRoutes } from "./routes/schema.js";
import { tauRoute } from "./routes/tau.js";

declare module "fastify" {
  interface FastifyInstance {
    /** Counters of the `/tau` passthrough (connections, invalid client requests, invalid upstream messages). */
    tauPassthrough: PassthroughCounters;
  }
}

/**
 * The gateway's HTTP/WebSocket front: `/tau` (Tau passthrough), `/rpc` (Ask JSON-RPC, when the
 * config provides it), `/healthz`, `/readyz`, `/schema`. Each concern is its own encapsulated
 * plugin. Closing the instance closes every client WebSocket (1001) and every passthrough
 * upstream connection; the shared `config.upstream` belongs to the caller.
 */
export function buildGateway(config: GatewayConfig): FastifyInstance {
  const app = Fastify({ logger: loggerOptions(config), genReqId: requestIdGenerator(config), trustProxy: config.trustProxy ?? false });
  app.decorate("tauPassthrough", newPassthroughCounters());
  const limits = resolveLimits(config.limits);
  const maxPayload = config.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const metrics = new GatewayMetrics({ passthrough: app.tauPassthrough, upstream: config.upstream, bridge: config.askHttp?.bridge });

  app.register(websocket, {
    options: { maxPayload, WebSocket: gatewayWebSocketClass(maxPayload) },
    errorHandler: clientSocketErrorHandler(metrics),
    // The plugin's default closes clients without a code; say why instead.
    preClose(done) {
      for (const client of app.websocketServer.clients) client.close(1001, "gateway shutting down");
      app.websocketServer.close(() => done());
    },
  });

  // Connection cap, slow consumers, keepalive and connection metrics, for every WebSocket route.
  installClientSocketPolicies(app, { limits, metrics });

  // Before every route: Origin allowlist, CORS, bearer tokens (WebSocket upgrades included).
  app.register(requestIdHeader);
  app.register(accessControl, { tokens: config.tokens, allowedOrigins: config.allowedOrigins });

  app.register(healthRoutes, { upstream: config.upstream });
  app.register(schemaRoutes);
  app.register(metricsRoute, { metrics });
  // With tokens, `/tau` enforces tenants; owners are learnt over the gateway's own upstream connection.
  const tenants = config.tokens ? new SessionTenants((sessionId) => config.upstream.request("session.snapshot", { sessionId })) : undefined;
  app.register(tauRoute, { upstream: config.tauUpstream, counters: app.tauPassthrough, tenants, maxInflight: limits.maxInflight, observe: metrics.observeCall, drain: config.drain });

  const askRoute = config.askRoute;
  if (askRoute) {
    app.register(async (scope) => {
      scope.get("/rpc", { websocket: true }, (socket, request) =>
        askRoute(socket, request, { gate: composeAskGates(metrics.askGate, inflightLimitGate(limits.maxInflight)) }),
      );
    });
  }
  const askHttp = config.askHttp;
  if (askHttp) {
    app.register(askHttpRoute, { bridge: askHttp.bridge, jsonrpc: { ...askHttp.jsonrpc, gate: composeAskGates(metrics.askGate, askHttp.jsonrpc.gate) }, bodyLimit: config.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES });
    app.register(askEventsRoute, {
      bridge: askHttp.bridge,
      gate: askHttp.jsonrpc.gate,
      heartbeatMs: askHttp.sseHeartbeatMs,
      maxBufferedBytes: limits.maxBufferedBytes,
      onSlowConsumer: () => metrics.slowConsumerDropped("/rpc/events"),
    });
  }
  if (config.drain) installDrain(app, config.drain);
  return app;
}
