import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import type { GatewayStore } from "../store/index.js";
import type { TauUpstream } from "../tau/upstream.js";
import type { GatewayDialect } from "./dialects.js";
import { PLUGIN } from "./plugin-names.js";

/**
 * The gateway's own long-lived upstream connections (the bridge connections) as one: requests for
 * the `/tau` relay's tenancy, readiness, metrics and drain. A bridge core's router, or a single
 * Tau connection.
 */
export interface GatewayUpstream {
  readonly connected: boolean;
  readonly unavailableReason: string | undefined;
  readonly openRequests: number;
  readonly stats: { reconnects: number; invalidMessages: number };
  request: TauUpstream["request"];
  /** Each Tau host's connection state, when the gateway has its hosts listed. */
  readonly hosts?: ReadonlyArray<{ key: string; connected: boolean; unavailableReason?: string }>;
}

declare module "fastify" {
  interface FastifyInstance {
    /** The gateway's own long-lived upstream connection (the bridge connection): readiness, metrics, tenants, drain. */
    upstream: GatewayUpstream;
    /** What gateway replicas share; undefined when nothing is shared. */
    store: GatewayStore | undefined;
    /** The client dialects the gateway serves, each on its own routes (none: only `/tau`). */
    dialects: readonly GatewayDialect[];
  }
}

/** What the gateway fronts, built and started by its caller, who also closes it after the gateway. */
export interface GatewayServices {
  upstream: GatewayUpstream;
  store?: GatewayStore;
  /** The client dialects served (absent or empty: only the `/tau` passthrough). */
  dialects?: readonly GatewayDialect[];
}

/** Puts the services the caller built on the root instance, for every plugin after it. */
const services: FastifyPluginAsync<GatewayServices> = async (app, { upstream, store, dialects = [] }) => {
  app.decorate("upstream", upstream);
  app.decorate("store", store);
  app.decorate("dialects", dialects);
};

export const gatewayServices = fp(services, { name: PLUGIN.services, fastify: "5.x" });
