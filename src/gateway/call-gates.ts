import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import type { JsonRpcDialect } from "../transports/call-observer.js";
import { composeCallGates, connectionGate, observingGate } from "../transports/call-gates.js";
import { tracingGate } from "../transports/call-spans.js";
import type { CallGate } from "../transports/jsonrpc-envelope.js";
import type { TraceCarrier } from "../shared/tracing.js";
import type { DrainController } from "./drain.js";
import type { GatewayMetrics } from "./metrics.js";
import { PLUGIN } from "./plugin-names.js";

declare module "fastify" {
  interface FastifyInstance {
    /** The gates every JSON-RPC call passes, by surface. */
    callGates: CallGates;
  }
}

/**
 * Which gates a JSON-RPC call passes on each of the gateway's surfaces, outermost first (a
 * connection's are composed by `connectionGate`, as for the stdio commands). Notifications pass a
 * connection's gates unreported and unrefused by the limit (they only settle work).
 */
export interface CallGates {
  /**
   * For one WebSocket or socket connection (the in-flight limit is per connection): tracing,
   * metrics, in-flight limit, drain. The gates are the same for every JSON-RPC dialect; `dialect`
   * labels the metrics and spans. `upgrade`: the trace context on the connection's upgrade request.
   */
  connection(dialect?: JsonRpcDialect, upgrade?: TraceCarrier): CallGate;
  /**
   * For one `POST /rpc` body: tracing, metrics, drain. A body lives for one answer and its batch
   * size is bounded, so it has no in-flight limit of its own. `parent`: the request's trace context.
   */
  httpRequest(parent?: TraceCarrier): CallGate;
  /** For opening a `GET /rpc/events` stream: drain only (opening a stream is not a client request in the metrics). */
  readonly eventStream: CallGate;
}

export function callGates(options: { metrics: GatewayMetrics; drain: DrainController; maxInflight: number }): CallGates {
  const { drain, maxInflight } = options;
  const observe = options.metrics.observeCall;
  return {
    connection: (dialect = "ask", upgrade) => connectionGate(dialect, { maxInflight, drain: drain.gate, observe, upgrade }),
    httpRequest: (parent) => composeCallGates(tracingGate("ask", parent), observingGate(observe, "ask"), drain.gate),
    eventStream: drain.gate,
  };
}

const callGatesPlugin: FastifyPluginAsync<{ maxInflight: number }> = async (app, { maxInflight }) => {
  app.decorate("callGates", callGates({ metrics: app.metrics, drain: app.drain, maxInflight }));
};

export const gatewayCallGates = fp(callGatesPlugin, {
  name: PLUGIN.callGates,
  fastify: "5.x",
  dependencies: [PLUGIN.metrics, PLUGIN.drain],
  decorators: { fastify: ["metrics", "drain"] },
});
