import type { FastifyPluginAsync } from "fastify";
import type { GatewayMetrics } from "../metrics.js";

/** `GET /metrics`: the gateway's metrics in the Prometheus text format (authenticated like every other route but the health checks). */
export const metricsRoute: FastifyPluginAsync<{ metrics: GatewayMetrics }> = async (app, { metrics }) => {
  app.get("/metrics", async (_request, reply) => {
    const text = await metrics.text();
    return reply.type(metrics.contentType).send(text);
  });
};
