import type { FastifyPluginAsync } from "fastify";
import type { BridgeCore } from "../bridge/bridge-core.js";
import fp from "fastify-plugin";
import { DrainController } from "./drain.js";
import { PLUGIN } from "./plugin-names.js";

declare module "fastify" {
  interface FastifyInstance {
    /** Graceful drain: the instance's owner calls `drain()` on SIGTERM/SIGINT, then closes the instance. */
    drain: DrainController;
  }
}

export interface DrainPluginOptions {
  /** How long work in flight gets to finish once draining starts. */
  timeoutMs: number;
  /** Where the turns still running at the deadline are ended (interrupted, each client told in its dialect). */
  turns?: Pick<BridgeCore, "endRunningTurns">;
}

/**
 * The gateway's drain controller. While it drains, WebSocket connections that arrive anyway (`/tau`
 * and `/rpc`) are closed with 1001 right after the upgrade; `/readyz` answers 503 (routes/health.ts)
 * and new requests are refused by the connections' drain gate (transports/call-gates.ts). The bridge connection's open
 * requests count as work in flight: they include every turn in flight (answered when it settles),
 * so subscribers still see turns end. Turns still running at the deadline are interrupted, and
 * every client attached hears how each ended, in its dialect, before its connection is closed.
 */
const drainPlugin: FastifyPluginAsync<DrainPluginOptions> = async (app, { timeoutMs, turns }) => {
  const drain = new DrainController({ timeoutMs });
  const upstream = app.upstream;
  drain.addSource("upstream requests", () => upstream.openRequests);
  if (turns) drain.atDeadline(async (budgetMs) => ({ ...(await turns.endRunningTurns(budgetMs)) }));
  app.decorate("drain", drain);

  app.addHook("onReady", async () => {
    app.websocketServer.on("connection", (socket) => {
      if (drain.draining) socket.close(1001, "gateway shutting down");
    });
  });
};

export const gatewayDrain = fp(drainPlugin, {
  name: PLUGIN.drain,
  fastify: "5.x",
  dependencies: [PLUGIN.services, PLUGIN.websocket],
  decorators: { fastify: ["upstream", "websocketServer"] },
});
