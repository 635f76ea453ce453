import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import { newPassthroughCounters, type PassthroughCounters } from "../transports/tau-passthrough.js";
import { GatewayMetrics } from "./metrics.js";
import { PLUGIN } from "./plugin-names.js";

declare module "fastify" {
  interface FastifyInstance {
    /** The gateway's Prometheus metrics, counted by the plugins as things happen and served on `/metrics`. */
    metrics: GatewayMetrics;
    /** Counters of the `/tau` passthrough (connections, invalid client requests, invalid upstream messages), read at scrape time. */
    tauPassthrough: PassthroughCounters;
  }
}

/** The metrics registry, and the figures it reads at scrape time: the services' (dialects included) and the `/tau` passthrough's. */
const metrics: FastifyPluginAsync = async (app) => {
  app.decorate("tauPassthrough", newPassthroughCounters());
  app.decorate("metrics", new GatewayMetrics({ passthrough: app.tauPassthrough, upstream: app.upstream, dialects: app.dialects, store: app.store }));
};

export const gatewayMetrics = fp(metrics, { name: PLUGIN.metrics, fastify: "5.x", dependencies: [PLUGIN.services], decorators: { fastify: ["upstream", "dialects"] } });
