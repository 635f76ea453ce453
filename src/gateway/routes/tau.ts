import { carrierOfHeaders } from "../../shared/tracing.js";
import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import { pinoLog } from "../log.js";
import { PLUGIN } from "../plugin-names.js";
import { relayTauConnection, type TauPassthroughOptions, type TauRelay } from "../../transports/tau-passthrough.js";
import { SessionTenants, TauTenantGate } from "../../transports/tau-tenancy.js";

export interface TauRouteOptions {
  /** Where clients are relayed; every client gets its own upstream connection there. */
  tauUpstream: TauPassthroughOptions["upstream"];
  /** Per-connection in-flight limit (see TauPassthroughOptions). */
  maxInflight: number;
}

/**
 * WebSocket `/tau`: Tau's own protocol, validated and relayed to the upstream (one upstream
 * connection per client), counted in the metrics. A client acting for a tenant (the gateway has
 * tokens) sees only its tenant's sessions; owners are learnt over the gateway's own upstream
 * connection. While the gateway drains, the requests relayed and still open count as work in flight.
 */
const tau: FastifyPluginAsync<TauRouteOptions> = async (app, options) => {
  const { upstream, tauPassthrough: counters, metrics, drain } = app;
  const tenants = new SessionTenants((sessionId) => upstream.request("session.snapshot", { sessionId }));
  const relays = new Set<TauRelay>();
  drain.addSource("tau requests", () => [...relays].reduce((open, relay) => open + relay.inflight, 0));

  app.get("/tau", { websocket: true }, (socket, request) => {
    const log = pinoLog(request.log);
    const gate = request.tenant !== undefined ? new TauTenantGate(request.tenant, tenants, log) : undefined;
    const { tauUpstream, maxInflight } = options;
    const relay = relayTauConnection(socket, { upstream: tauUpstream, counters, log, gate, maxInflight, observe: metrics.observeCall, trace: carrierOfHeaders(request.headers) });
    relays.add(relay);
    void relay.closed.then(() => relays.delete(relay));
  });

  // Upstream sockets are ours: close them with the gateway even if a client never says goodbye.
  app.addHook("onClose", async () => {
    for (const relay of relays) relay.close(1001, "gateway shutting down");
  });
};

export const tauRoute = fp(tau, {
  name: "tau-gateway-route-tau",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.services, PLUGIN.metrics, PLUGIN.drain, PLUGIN.websocket, PLUGIN.accessControl],
  decorators: { fastify: ["upstream", "tauPassthrough", "metrics", "drain", "websocketServer"], request: ["tenant"] },
});
