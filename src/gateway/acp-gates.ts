import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import { acpObservingGate } from "../transports/acp-call-gates.js";
import type { AcpCallGate } from "../transports/acp-jsonrpc.js";
import { composeAskGates, inflightLimitGate } from "../transports/ask-call-gates.js";
import { PLUGIN } from "./plugin-names.js";

declare module "fastify" {
  interface FastifyInstance {
    /** The gates every ACP request passes. */
    acpGates: AcpGates;
  }
}

/**
 * The gates of an ACP connection, outermost first: metrics, the per-connection in-flight limit,
 * drain — the same as an Ask WebSocket's. Notifications (session/cancel) pass none: they only
 * settle work, and holding one back would keep a turn running.
 */
export interface AcpGates {
  connection(): AcpCallGate;
}

const acpGatesPlugin: FastifyPluginAsync<{ maxInflight: number }> = async (app, { maxInflight }) => {
  const { metrics, drain } = app;
  app.decorate("acpGates", {
    connection: () => composeAskGates(acpObservingGate(metrics.observeCall), inflightLimitGate(maxInflight), drain.askGate),
  });
};

export const gatewayAcpGates = fp(acpGatesPlugin, {
  name: PLUGIN.acpGates,
  fastify: "5.x",
  dependencies: [PLUGIN.metrics, PLUGIN.drain],
  decorators: { fastify: ["metrics", "drain"] },
});
