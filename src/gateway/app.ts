import websocket from "@fastify/websocket";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import { newPassthroughCounters, type PassthroughCounters } from "../transports/tau-passthrough.js";
import { DEFAULT_MAX_MESSAGE_BYTES, type GatewayConfig } from "./config.js";
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
  const app = Fastify({ logger: loggerOptions(config) });
  app.decorate("tauPassthrough", newPassthroughCounters());

  app.register(websocket, {
    options: { maxPayload: config.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES },
    // The plugin's default closes clients without a code; say why instead.
    preClose(done) {
      for (const client of app.websocketServer.clients) client.close(1001, "gateway shutting down");
      app.websocketServer.close(() => done());
    },
  });

  app.register(healthRoutes, { upstream: config.upstream });
  app.register(schemaRoutes);
  app.register(tauRoute, { upstream: config.tauUpstream, counters: app.tauPassthrough });

  const askRoute = config.askRoute;
  if (askRoute) {
    app.register(async (scope) => {
      scope.get("/rpc", { websocket: true }, (socket, request) => askRoute(socket, request));
    });
  }
  return app;
}

/** Access-log hygiene: query strings may carry tokens (Tau's own `tau_token` convention), so they are redacted. */
function loggerOptions(config: GatewayConfig): FastifyServerOptions["logger"] {
  if (!config.logger) return false;
  return {
    level: config.logger.level,
    ...(config.logger.stream ? { stream: config.logger.stream } : {}),
    redact: ["req.headers.authorization", "req.headers.cookie"],
    serializers: {
      req: (req) => ({
        method: req.method,
        url: redactQuery(req.url ?? ""),
        remoteAddress: req.socket?.remoteAddress,
      }),
    },
  };
}

function redactQuery(url: string): string {
  const at = url.indexOf("?");
  return at === -1 ? url : `${url.slice(0, at)}?REDACTED`;
}
