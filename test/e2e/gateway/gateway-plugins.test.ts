import Fastify, { type FastifyPluginAsync } from "fastify";
import { describe, expect, it } from "vitest";
import { callGates, gatewayCallGates } from "../../../src/gateway/call-gates.js";
import { askSocketListener } from "../../../src/cli/dialects/ask/socket-route.js";
import { clientSockets } from "../../../src/gateway/client-sockets.js";
import { DrainController } from "../../../src/gateway/drain.js";
import { gatewayDrain } from "../../../src/gateway/drain-plugin.js";
import { DEFAULT_LIMITS } from "../../../src/gateway/limits.js";
import { GatewayMetrics } from "../../../src/gateway/metrics.js";
import { gatewayMetrics } from "../../../src/gateway/metrics-plugin.js";
import { askEventsRoute } from "../../../src/cli/dialects/ask/events-route.js";
import { askHttpRoute } from "../../../src/cli/dialects/ask/http-route.js";
import { dialectWebSocketRoute } from "../../../src/gateway/routes/dialect-websocket.js";
import { readinessRoute } from "../../../src/gateway/routes/health.js";
import { metricsRoute } from "../../../src/gateway/routes/metrics.js";
import { tauRoute } from "../../../src/gateway/routes/tau.js";
import { RpcError } from "../../../src/shared/rpc-error.js";
import { newPassthroughCounters } from "../../../src/transports/tau-passthrough.js";
import { parsePrometheus, sampleValue } from "../../support/prometheus.js";

/**
 * The gateway's plugins: each one declares what it relies on, so Fastify refuses to start an app
 * that registers it without that; and the Ask call gates, composed in one place, in their order.
 */

describe("plugin metadata", () => {
  const cases: Array<[string, FastifyPluginAsync<any>, object, string]> = [
    ["/readyz", readinessRoute, {}, "upstream"],
    ["/metrics", metricsRoute, {}, "metrics"],
    ["/tau", tauRoute, { tauUpstream: { url: "ws://127.0.0.1:1" }, maxInflight: 1 }, "upstream"],
    ["a dialect's WebSocket route", dialectWebSocketRoute, { dialect: { name: "ask", route: "/rpc", open: () => () => ({ receive: async () => undefined, skipOversized: () => undefined, close: () => undefined }) } }, "callGates"],
    ["POST /rpc", askHttpRoute, { jsonrpc: { jsonrpcMember: "include" }, bodyLimit: 1024 }, "askSurface"],
    ["GET /rpc/events", askEventsRoute, {}, "askSurface"],
    [
      "Ask Unix socket",
      askSocketListener,
      { path: "/nonexistent/ask.sock", mode: 0o600, jsonrpc: { jsonrpcMember: "include" }, tenant: undefined, limits: DEFAULT_LIMITS, maxMessageBytes: 1024 },
      "askSurface",
    ],
    ["metrics", gatewayMetrics, {}, "upstream"],
    ["client sockets", clientSockets, { limits: DEFAULT_LIMITS, maxMessageBytes: 1024 }, "dialects"],
    ["drain", gatewayDrain, { timeoutMs: 1 }, "upstream"],
    ["call gates", gatewayCallGates, { maxInflight: 1 }, "metrics"],
  ];

  it.each(cases)("%s, registered without what it declares, stops the app from starting, naming the decoration", async (_name, plugin, options, missing) => {
    const app = Fastify();
    app.register(plugin, options);
    const error = await app.ready().then(
      () => undefined,
      (err: unknown) => err as { code?: string; message: string },
    );
    expect(error?.code).toBe("FST_ERR_PLUGIN_NOT_PRESENT_IN_INSTANCE");
    expect(error?.message).toContain(`'${missing}'`);
    await app.close();
  });
});

describe("Ask call gates", () => {
  const setup = (maxInflight: number) => {
    const upstream = { stats: { reconnects: 0, invalidMessages: 0 } };
    const metrics = new GatewayMetrics({ passthrough: newPassthroughCounters(), upstream });
    const drain = new DrainController({ timeoutMs: 1000 });
    const requests = async (method: string, outcome: string) =>
      sampleValue(parsePrometheus(await metrics.text()), "tau_gateway_requests_total", { dialect: "ask", method, outcome });
    return { gates: callGates({ metrics, drain, maxInflight }), drain, requests };
  };
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (err: unknown) => err as RpcError,
    );

  it("limits the calls in flight per WebSocket connection and counts the refusal in the metrics", async () => {
    const { gates, requests } = setup(1);
    const connection = gates.connection();
    let finish: (value: string) => void = () => undefined;
    const running = connection("session/send", () => new Promise<string>((resolve) => (finish = resolve)));
    const refused = await failure(connection("ping", async () => "pong"));
    expect(refused).toBeInstanceOf(RpcError);
    expect(refused?.code).toBe(-32013);
    // Another connection has its own limit.
    expect(await gates.connection()("ping", async () => "pong")).toBe("pong");
    finish("sent");
    expect(await running).toBe("sent");
    expect(await connection("ping", async () => "pong")).toBe("pong");
    expect(await requests("ping", "overloaded")).toBe(1);
    expect(await requests("ping", "ok")).toBe(2);
    expect(await requests("session/send", "ok")).toBe(1);
  });

  it("refuses on every surface once draining, innermost: the metrics see the refusals of WebSocket and HTTP calls", async () => {
    const { gates, drain, requests } = setup(8);
    void drain.drain();
    const ran: string[] = [];
    const call = (surface: string) => async () => void ran.push(surface);
    for (const refused of [
      gates.connection()("ping", call("websocket")),
      gates.httpRequest()("ping", call("http")),
      gates.eventStream("session/subscribe", call("events")),
    ]) {
      expect((await failure(refused))?.code).toBe(-32012);
    }
    expect(ran).toEqual([]);
    // Opening an event stream is not a client request in the metrics.
    expect(await requests("ping", "upstream_unavailable")).toBe(2);
    expect(await requests("session/subscribe", "upstream_unavailable")).toBe(0);
  });
});
