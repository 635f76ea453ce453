import type { FastifyPluginAsync } from "fastify";
import type { AskSurface } from "../../../ask/ask-surface.js";
import type { AskJsonRpcOptions } from "../../../transports/ask-jsonrpc.js";
import { attachAskJsonRpc } from "../../../transports/ask-jsonrpc.js";
import { askSurfaceMetrics } from "./metrics.js";
import { askSocketListener } from "./socket-route.js";
import { DEFAULT_TENANT } from "../../../gateway/auth/tokens.js";
import type { DialectRoutesContext, GatewayDialect } from "../../../gateway/dialects.js";
import { askEventsRoute } from "./events-route.js";
import { askHttpRoute } from "./http-route.js";

declare module "fastify" {
  interface FastifyInstance {
    /** The Ask surface behind `POST /rpc`, `/rpc/events` and the socket; decorated in the scope of the Ask routes only. */
    askSurface: AskSurface;
  }
}

export interface AskGatewayOptions {
  /** Framing of every Ask connection (WebSocket, HTTP request, event stream, socket client); tenants and gates are the gateway's. */
  jsonrpc: Pick<AskJsonRpcOptions, "jsonrpcMember" | "maxBatch">;
  /**
   * A Unix socket serving the Ask surface as NDJSON to local clients (bound when the app gets
   * ready). Its file mode is its access control: clients present no token and act for tenant
   * "default" when the gateway has tokens, for no tenant otherwise.
   */
  socket?: { path: string; mode: number };
}

/**
 * The Ask dialect as the gateway serves it: WebSocket `/rpc`, and besides it `POST /rpc`,
 * `GET /rpc/events` (server-sent events), the Unix socket when one is named, and the surface's own
 * figures in the metrics.
 */
export function askGatewayDialect(surface: AskSurface, options: AskGatewayOptions): GatewayDialect {
  const routes: FastifyPluginAsync<DialectRoutesContext> = async (app, context) => {
    app.decorate("askSurface", surface);
    app.register(askHttpRoute, { jsonrpc: options.jsonrpc, bodyLimit: context.maxMessageBytes, recording: context.recording });
    app.register(askEventsRoute, { heartbeatMs: context.sseHeartbeatMs, maxBufferedBytes: context.limits.maxBufferedBytes, stallTimeoutMs: context.limits.idleTimeoutMs, recording: context.recording });
    if (options.socket) {
      const tenant = context.authenticated ? DEFAULT_TENANT : undefined;
      app.register(askSocketListener, { ...options.socket, jsonrpc: options.jsonrpc, tenant, limits: context.limits, maxMessageBytes: context.maxMessageBytes, recording: context.recording });
    }
  };
  return {
    name: "ask",
    route: "/rpc",
    open: ({ tenant, principal, gate }) => (send, transport) => attachAskJsonRpc(surface, send, { ...options.jsonrpc, tenant, principal, gate, transport }),
    routes,
    routeLabels: ["/rpc/events"],
    metrics: (registers) => askSurfaceMetrics(surface, registers),
  };
}
