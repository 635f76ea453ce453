import type { FastifyInstance } from "fastify";
import type { DrainController } from "./drain.js";

/**
 * What the HTTP front shows while the gateway drains: `/readyz` answers 503 so load balancers stop
 * sending traffic, and WebSocket connections that arrive anyway (`/tau` and `/rpc`) are closed
 * with 1001 right after the upgrade. Requests on connections already open are the drain
 * controller's (Ask: -32012 via its gate). Installed on the root instance, so the hooks cover every
 * route; call it after the WebSocket plugin is registered.
 */
export function installDrain(app: FastifyInstance, drain: DrainController): void {
  app.addHook("onRequest", async (request, reply) => {
    if (!drain.draining || request.ws) return;
    if (request.url === "/readyz" || request.url.startsWith("/readyz?")) {
      await reply.code(503).send({ status: "draining", reason: "gateway shutting down" });
    }
  });

  app.addHook("onReady", async () => {
    app.websocketServer.on("connection", (socket) => {
      if (drain.draining) socket.close(1001, "gateway shutting down");
    });
  });
}
