import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import { TAU_VERSION } from "../../tau/codec.js";
import { PLUGIN } from "../plugin-names.js";

/** `/healthz`: the process is up and serving HTTP. */
const liveness: FastifyPluginAsync = async (app) => {
  app.get("/healthz", async () => ({ status: "ok" }));
};

/**
 * `/readyz`: the gateway can do its job, i.e. it is not draining and its upstream connection is
 * open, version-checked (a mismatched upstream never connects) and initialized. Load balancers
 * route on it, so a draining gateway stops getting traffic. A replica whose shared store cannot be
 * reached is not ready either: it can neither read nor append session events.
 */
const readiness: FastifyPluginAsync = async (app) => {
  const { upstream, drain, store } = app;
  app.get("/readyz", async (_request, reply) => {
    if (drain.draining) {
      reply.code(503);
      return { status: "draining", reason: "gateway shutting down" };
    }
    if (store && !(await store.ready())) {
      reply.code(503);
      return { status: "unavailable", reason: `the shared store (${store.kind}) cannot be reached` };
    }
    if (upstream.connected) return { status: "ready", upstream: { connected: true, protocolVersion: TAU_VERSION } };
    reply.code(503);
    return { status: "unavailable", reason: upstream.unavailableReason ?? "Tau upstream is not connected" };
  });
};

export const livenessRoute = fp(liveness, { name: "tau-gateway-route-healthz", fastify: "5.x", encapsulate: true });

export const readinessRoute = fp(readiness, {
  name: "tau-gateway-route-readyz",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.services, PLUGIN.drain],
  decorators: { fastify: ["upstream", "drain"] },
});
