import type { FastifyPluginAsync } from "fastify";
import { TAU_VERSION } from "../../tau/codec.js";
import type { TauUpstream } from "../../tau/upstream.js";

/**
 * `/healthz`: the process is up and serving HTTP. `/readyz`: it can do its job, i.e. the gateway's
 * upstream connection is open, version-checked (a mismatched upstream never connects) and
 * initialized. Load balancers route on the second.
 */
export const healthRoutes: FastifyPluginAsync<{ upstream: TauUpstream }> = async (app, { upstream }) => {
  app.get("/healthz", async () => ({ status: "ok" }));

  app.get("/readyz", async (_request, reply) => {
    if (upstream.connected) return { status: "ready", upstream: { connected: true, protocolVersion: TAU_VERSION } };
    reply.code(503);
    return { status: "unavailable", reason: upstream.unavailableReason ?? "Tau upstream is not connected" };
  });
};
