import type { FastifyPluginAsync } from "fastify";
import type { DrainController } from "../drain.js";
import { pinoLog } from "../log.js";
import { relayTauConnection, type PassthroughCounters, type TauPassthroughOptions, type TauRelay } from "../../transports/tau-passthrough.js";
import { TauTenantGate, type SessionTenants } from "../../transports/tau-tenancy.js";

export interface TauRouteOptions {
  upstream: TauPassthroughOptions["upstream"];
  counters: PassthroughCounters;
  /** Set when the gateway has tokens: each connection then sees only its tenant's sessions. */
  tenants?: SessionTenants;
  /** Per-connection in-flight limit and request metrics (see TauPassthroughOptions). */
  maxInflight?: TauPassthroughOptions["maxInflight"];
  observe?: TauPassthroughOptions["observe"];
  /** While the gateway drains, the requests relayed and still open count as work in flight. */
  drain?: Pick<DrainController, "addSource">;
}

/** WebSocket `/tau`: Tau's own protocol, validated and relayed to the upstream (one upstream connection per client). */
export const tauRoute: FastifyPluginAsync<TauRouteOptions> = async (app, options) => {
  const relays = new Set<TauRelay>();
  options.drain?.addSource("tau requests", () => [...relays].reduce((open, relay) => open + relay.inflight, 0));

  app.get("/tau", { websocket: true }, (socket, request) => {
    const log = pinoLog(request.log);
    const gate = options.tenants && request.tenant !== undefined ? new TauTenantGate(request.tenant, options.tenants, log) : undefined;
    const relay = relayTauConnection(socket, { upstream: options.upstream, counters: options.counters, log, gate, maxInflight: options.maxInflight, observe: options.observe });
    relays.add(relay);
    void relay.closed.then(() => relays.delete(relay));
  });

  // Upstream sockets are ours: close them with the gateway even if a client never says goodbye.
  app.addHook("onClose", async () => {
    for (const relay of relays) relay.close(1001, "gateway shutting down");
  });
};
