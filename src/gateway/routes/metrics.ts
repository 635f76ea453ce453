import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import { PLUGIN } from "../plugin-names.js";

export interface MetricsRouteOptions {
  /**
   * The figures are the whole gateway's, every tenant's traffic summed (connections, requests by
   * method, events, interactions, the process itself): with several tenants only an operator's
   * token may read them, since they would tell a tenant what the others do.
   */
  operatorsOnly: boolean;
}

/** `GET /metrics`: the gateway's metrics in the Prometheus text format (authenticated like every other route but the health checks). */
const metricsText: FastifyPluginAsync<MetricsRouteOptions> = async (app, { operatorsOnly }) => {
  const metrics = app.metrics;
  app.get("/metrics", async (request, reply) => {
    if (operatorsOnly && request.principal?.operator !== true) {
      return reply
        .code(403)
        .header("Cache-Control", "no-store")
        .send({ error: "forbidden", message: '/metrics counts every tenant\'s traffic: with several tenants it answers only an operator\'s token ("operator": true in the tokens file)' });
    }
    const text = await metrics.text();
    return reply.type(metrics.contentType).send(text);
  });
};

export const metricsRoute = fp(metricsText, {
  name: "tau-gateway-route-metrics",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.metrics, PLUGIN.accessControl],
  decorators: { fastify: ["metrics"], request: ["principal"] },
});
