import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import { composeAskGates, inflightLimitGate, observingGate } from "../transports/ask-call-gates.js";
import type { AskCallGate } from "../transports/ask-jsonrpc.js";
import type { CallDialect } from "../transports/call-observer.js";
import type { DrainController } from "./drain.js";
import type { GatewayMetrics } from "./metrics.js";
import { PLUGIN } from "./plugin-names.js";

declare module "fastify" {
  interface FastifyInstance {
    /** The gates every Ask call passes, by surface. */
    askGates: AskGates;
  }
}

/**
 * The one place that says which gates an Ask call passes on each surface, outermost first. The
 * drain gate is innermost, so the metrics (and the in-flight limit) see its refusals too.
 */
export interface AskGates {
  /**
   * For one WebSocket connection (the in-flight limit is per connection): metrics, in-flight
   * limit, drain. The gates are the same for every JSON-RPC dialect; `dialect` labels the metrics.
   */
  connection(dialect?: CallDialect): AskCallGate;
  /**
   * For `POST /rpc` bodies: metrics, drain. A body lives for one answer and its batch size is
   * bounded, so it has no in-flight limit of its own.
   */
  readonly httpRequest: AskCallGate;
  /** For opening a `GET /rpc/events` stream: drain only (opening a stream is not a client request in the metrics). */
  readonly eventStream: AskCallGate;
}

export function askGates(options: { metrics: GatewayMetrics; drain: DrainController; maxInflight: number }): AskGates {
  const { drain, maxInflight } = options;
  const observe = observingGate(options.metrics.observeCall);
  return {
    connection: (dialect = "ask") => composeAskGates(observingGate(options.metrics.observeCall, dialect), inflightLimitGate(maxInflight), drain.askGate),
    httpRequest: composeAskGates(observe, drain.askGate),
    eventStream: drain.askGate,
  };
}

const askGatesPlugin: FastifyPluginAsync<{ maxInflight: number }> = async (app, { maxInflight }) => {
  app.decorate("askGates", askGates({ metrics: app.metrics, drain: app.drain, maxInflight }));
};

export const gatewayAskGates = fp(askGatesPlugin, {
  name: PLUGIN.askGates,
  fastify: "5.x",
  dependencies: [PLUGIN.metrics, PLUGIN.drain],
  decorators: { fastify: ["metrics", "drain"] },
});
