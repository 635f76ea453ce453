import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import { PLUGIN } from "../plugin-names.js";

/** `GET /metrics`: the gateway's metrics in the Prometheus text format (authenticated like every other route but the health checks). */
const metricsText: FastifyPluginAsync = async (app) => {
  const metrics = app.metrics;
  app.get("/metrics", async (_request, reply) => {
    const text = await metrics.text();
    return reply.type(metrics.contentType).send(text);
  });
};

export const metricsRoute = fp(metricsText, {
  name: "tau-gateway-route-metrics",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.metrics],
  decorators: { fastify: ["metrics"] },
});
