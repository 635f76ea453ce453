import Fastify, { type FastifyInstance } from "fastify";
import { gatewayCallGates } from "./call-gates.js";
import { accessControl } from "./auth/access-control.js";
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
import { dialectWebSocketRoute } from "./routes/dialect-websocket.js";
import { livenessRoute, readinessRoute } from "./routes/health.js";
import { metricsRoute } from "./routes/metrics.js";
import { schemaRoutes } from "./routes/schema.js";
import { receiptsRoute } from "./routes/receipts.js";
import { sessionRolesRoute } from "./routes/session-roles.js";
import { tauRoute } from "./routes/tau.js";
import { allowedHostNames } from "./auth/hosts.js";
import { inspectorRoutes } from "./inspector/inspector-routes.js";
import { teeTaps } from "../transports/recording/frame-tap.js";
import { gatewayServices } from "./services.js";
import { useBoundedJsonBodies } from "./bounded-json-body.js";

/**
 * The gateway's HTTP/WebSocket front: `/tau` (Tau passthrough), each dialect of the config's list
 * on its WebSocket route and its further routes (Ask: `/rpc`, `POST /rpc`, `/rpc/events`, a Unix
 * socket when it names one; Codex app-server: `/`; ACP: `/acp`), `/healthz`, `/readyz`,
 * `/metrics`, `/schema`. First the plugins that decorate the root instance
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
  useBoundedJsonBodies(app);
  const maxMessageBytes = config.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  // Every client frame, to the recording folder (`--record`) and the inspector (`--inspector`) alike.
  const frameTap = teeTaps(config.recording, config.inspector?.hub);

  const dialects = config.dialects ?? [];
  app.register(gatewayServices, { upstream: config.upstream, store: config.store, dialects });
  app.register(gatewayMetrics);
  app.register(networkLimits, { limits, trustProxy: config.trustProxy ?? false });
  // Connection cap first: a full gateway refuses an upgrade (503) before any other check. At close
  // the WebSocket close handshake gets what is left of the drain (`app.drain` exists by then).
  app.register(clientSockets, { limits, maxMessageBytes, closeHandshakeMs: () => app.drain.closeHandshakeBudgetMs(), recording: frameTap });
  // Before every route: request id, then (without tokens) Host allowlist, Origin allowlist, CORS, bearer tokens (WebSocket upgrades included).
  app.register(requestIdHeader);
  app.register(accessControl, {
    tokens: config.tokens,
    allowedOrigins: config.allowedOrigins,
    allowedHosts: config.allowedHosts,
    exposedHeaders: [...new Set(dialects.flatMap((dialect) => dialect.exposedHeaders ?? []))],
  });
  app.register(gatewayDrain, { timeoutMs: config.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS, turns: config.turns });
  app.register(gatewayCallGates, { maxInflight: limits.maxInflight });

  app.register(livenessRoute);
  app.register(readinessRoute);
  app.register(schemaRoutes);
  app.register(metricsRoute, { operatorsOnly: (config.tokens?.tenantCount ?? 0) > 1 });
  app.register(tauRoute, { tauUpstream: config.tauUpstream, maxInflight: limits.maxInflight });
  if (config.receipts) app.register(receiptsRoute, { receipts: config.receipts });
  // Roles need principals: a gateway without tokens has none, and no such route.
  if (config.roles && config.tokens) app.register(sessionRolesRoute, { core: config.roles });
  const routesContext = { limits, maxMessageBytes, authenticated: config.tokens !== undefined, sseHeartbeatMs: config.sseHeartbeatMs, recording: frameTap };
  for (const dialect of dialects) {
    app.register(dialectWebSocketRoute, { dialect });
    if (dialect.routes) app.register(dialect.routes, routesContext);
  }
  const inspector = config.inspector;
  if (inspector) {
    app.register(inspectorRoutes, {
      hub: inspector.hub,
      sessions: inspector.sessions,
      receipts: inspector.receipts,
      access: { authenticated: config.tokens !== undefined, hosts: allowedHostNames(inspector.listenHost, inspector.hosts) },
      heartbeatMs: config.sseHeartbeatMs,
      maxBufferedBytes: limits.maxBufferedBytes,
      stallTimeoutMs: limits.idleTimeoutMs,
    });
  }
  return app;
}
