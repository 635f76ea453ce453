import type { FastifyPluginAsync } from "fastify";
import { pinoLog } from "../log.js";
import { relayTauConnection, type PassthroughCounters, type TauPassthroughOptions, type TauRelay } from "../../transports/tau-passthrough.js";

export interface TauRouteOptions {
  upstream: TauPassthroughOptions["upstream"];
  counters: PassthroughCounters;
}

/** WebSocket `/tau`: Tau's own protocol, validated and relayed to the upstream (one upstream connection per client). */
export const tauRoute: FastifyPluginAsync<TauRouteOptions> = async (app, options) => {
  const relays = new Set<TauRelay>();

  app.get("/tau", { websocket: true }, (socket, request) => {
    const relay = relayTauConnection(socket, { upstream: options.upstream, counters: options.counters, log: pinoLog(request.log) });
    relays.add(relay);
    void relay.closed.then(() => relays.delete(relay));
  });

  // Upstream sockets are ours: close them with the gateway even if a client never says goodbye.
  app.addHook("onClose", async () => {
    for (const relay of relays) relay.close(1001, "gateway shutting down");
  });
};
