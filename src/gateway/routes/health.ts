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
 * open, version-checked (a mismatched upstream never connects) and initialized — with several Tau
 * hosts, one of them is (new sessions go there; the sessions of a host that is down fail alone), and
 * the answer lists each host's state. Load balancers route on it, so a draining gateway stops
 * getting traffic. A replica whose shared store cannot be reached is not ready either: it can
 * neither read nor append session events.
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
    // Several hosts: each one's state, so an operator sees which is down while the rest serve.
    const hosts = upstream.hosts && upstream.hosts.length > 1 ? { hosts: upstream.hosts.map(({ key, connected, unavailableReason }) => ({ host: key, connected, ...(unavailableReason ? { reason: unavailableReason } : {}) })) } : {};
    if (upstream.connected) return { status: "ready", upstream: { connected: true, protocolVersion: TAU_VERSION, ...hosts } };
    reply.code(503);
    return { status: "unavailable", reason: upstream.unavailableReason ?? "Tau upstream is not connected", ...hosts };
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
