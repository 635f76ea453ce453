import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import type { AcpAgent } from "../acp/agent.js";
import type { AskBridge } from "../ask/ask-bridge.js";
import type { CodexBridge } from "../codex/codex-bridge.js";
import type { GatewayStore } from "../store/index.js";
import type { TauUpstream } from "../tau/upstream.js";
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
    /** The Ask bridge behind `/rpc` and `/rpc/events`; decorated only when the gateway serves Ask clients. */
    askBridge: AskBridge;
    /** The Codex app-server bridge behind WebSocket `/`; decorated only when the gateway serves Codex clients. */
    codexBridge: CodexBridge;
    /** The ACP agent behind `/acp`; decorated only when the gateway serves ACP clients. */
    acpAgent: AcpAgent;
  }
}

/** What the gateway fronts, built and started by its caller, who also closes it after the gateway. */
export interface GatewayServices {
  upstream: GatewayUpstream;
  store?: GatewayStore;
  /** Absent: the gateway serves no Ask surface. */
  askBridge?: AskBridge;
  /** Absent: the gateway serves no Codex app-server surface. */
  codexBridge?: CodexBridge;
  /** Absent: the gateway serves no ACP surface. */
  acpAgent?: AcpAgent;
}

/** Puts the services the caller built on the root instance, for every plugin after it. */
const services: FastifyPluginAsync<GatewayServices> = async (app, { upstream, store, askBridge, codexBridge, acpAgent }) => {
  app.decorate("upstream", upstream);
  app.decorate("store", store);
  if (askBridge) app.decorate("askBridge", askBridge);
  if (codexBridge) app.decorate("codexBridge", codexBridge);
  if (acpAgent) app.decorate("acpAgent", acpAgent);
};

export const gatewayServices = fp(services, { name: PLUGIN.services, fastify: "5.x" });
