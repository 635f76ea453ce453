import Fastify, { type FastifyInstance } from "fastify";
import { gatewayCallGates } from "./call-gates.js";
import { askSocketListener } from "./ask-socket.js";
import { accessControl } from "./auth/access-control.js";
import { DEFAULT_TENANT } from "./auth/tokens.js";
import { clientSockets } from "./client-sockets.js";
import { DEFAULT_MAX_MESSAGE_BYTES, type GatewayConfig } from "./config.js";
import { DEFAULT_DRAIN_TIMEOUT_MS } from "./drain.js";
import { gatewayDrain } from "./drain-plugin.js";
import { resolveLimits } from "./limits.js";
import { loggerOptions } from "./log-options.js";
import { gatewayMetrics } from "./metrics-plugin.js";
import { networkLimits, nodeServerOptions } from "./network-limits.js";
import { requestIdGenerator, requestIdHeader } from "./request-id.js";
import { lazySchemaCompilers } from "./schema-compilers.js";
import { acpWebSocketRoute } from "./routes/acp-websocket.js";
import { askEventsRoute } from "./routes/ask-events.js";
import { askHttpRoute } from "./routes/ask-http.js";
import { askWebSocketRoute } from "./routes/ask-websocket.js";
import { codexWebSocketRoute } from "./routes/codex-websocket.js";
import { livenessRoute, readinessRoute } from "./routes/health.js";
import { metricsRoute } from "./routes/metrics.js";
import { schemaRoutes } from "./routes/schema.js";
import { tauRoute } from "./routes/tau.js";
import { allowedHostNames } from "./inspector/access-guard.js";
import { inspectorRoutes } from "./inspector/inspector-routes.js";
import { teeTaps } from "../transports/recording/frame-tap.js";
import { gatewayServices } from "./services.js";

/**
 * The gateway's HTTP/WebSocket front: `/tau` (Tau passthrough), `/rpc` and `/rpc/events` (Ask,
 * when the config provides a bridge, and a Unix socket when it names one), WebSocket `/` (Codex
 * app-server, when the config provides its bridge), `/acp` (ACP, when it provides an agent),
 * `/healthz`, `/readyz`, `/metrics`, `/schema`. First the plugins that decorate the root instance
 * for the others, in the order their hooks must run; then every route as an encapsulated plugin
 * that declares what it relies on. Closing the instance closes every client WebSocket (1001),
 * socket client, event stream and passthrough upstream connection; the services in the config
 * belong to the caller.
 */
export function buildGateway(config: GatewayConfig): FastifyInstance {
  const limits = resolveLimits(config.limits);
  const app = Fastify({
    ...nodeServerOptions(limits),
    logger: loggerOptions(config),
    genReqId: requestIdGenerator(config),
    trustProxy: config.trustProxy ?? false,
    schemaController: { compilersFactory: lazySchemaCompilers },
  });
  const maxMessageBytes = config.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  // Every client frame, to the recording folder (`--record`) and the inspector (`--inspector`) alike.
  const frameTap = teeTaps(config.recording, config.inspector?.hub);

  app.register(gatewayServices, { upstream: config.upstream, store: config.store, askBridge: config.ask?.bridge, codexBridge: config.codex?.bridge, acpAgent: config.acp?.agent });
  app.register(gatewayMetrics);
  app.register(networkLimits, { limits, trustProxy: config.trustProxy ?? false });
  // Connection cap first: a full gateway refuses an upgrade (503) before any other check. At close
  // the WebSocket close handshake gets what is left of the drain (`app.drain` exists by then).
  app.register(clientSockets, { limits, maxMessageBytes, closeHandshakeMs: () => app.drain.closeHandshakeBudgetMs(), recording: frameTap });
  // Before every route: request id, then Origin allowlist, CORS, bearer tokens (WebSocket upgrades included).
  app.register(requestIdHeader);
  app.register(accessControl, { tokens: config.tokens, allowedOrigins: config.allowedOrigins });
  app.register(gatewayDrain, { timeoutMs: config.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS, turns: config.turns });
  app.register(gatewayCallGates, { maxInflight: limits.maxInflight });

  app.register(livenessRoute);
  app.register(readinessRoute);
  app.register(schemaRoutes);
  app.register(metricsRoute);
  app.register(tauRoute, { tauUpstream: config.tauUpstream, maxInflight: limits.maxInflight });
  const ask = config.ask;
  if (ask) {
    app.register(askWebSocketRoute, { jsonrpc: ask.jsonrpc });
    app.register(askHttpRoute, { jsonrpc: ask.jsonrpc, bodyLimit: maxMessageBytes, recording: frameTap });
    app.register(askEventsRoute, { heartbeatMs: ask.sseHeartbeatMs, maxBufferedBytes: limits.maxBufferedBytes, recording: frameTap });
    if (ask.socket) {
      const tenant = config.tokens ? DEFAULT_TENANT : undefined;
      app.register(askSocketListener, { ...ask.socket, jsonrpc: ask.jsonrpc, tenant, limits, maxMessageBytes, recording: frameTap });
    }
  }
  if (config.codex) app.register(codexWebSocketRoute);
  if (config.acp) app.register(acpWebSocketRoute);
  const inspector = config.inspector;
  if (inspector) {
    app.register(inspectorRoutes, {
      hub: inspector.hub,
      sessions: inspector.sessions,
      access: { authenticated: config.tokens !== undefined, hosts: allowedHostNames(inspector.listenHost, inspector.hosts) },
      heartbeatMs: ask?.sseHeartbeatMs,
      maxBufferedBytes: limits.maxBufferedBytes,
    });
  }
  return app;
}
