import { describe, expect, it } from "vitest";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { RpcError } from "../../support/ask-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startOperatedGateway, waitUntil, type OperatedGatewayOptions } from "../../support/operated-gateway.js";
import { sampleValue, type Sample } from "../../support/prometheus.js";
import { errorOf, resultOf } from "../../support/tau-client.js";

/** `GET /metrics` scraped from a real gateway after real traffic on both dialects. */

const cleanups = cleanupsAfterEach();

const gateway = (options: OperatedGatewayOptions = {}) => cleanups.stopAfterTest(startOperatedGateway(options));

const requests = (samples: Sample[], dialect: string, method: string, outcome: string) =>
  sampleValue(samples, "tau_gateway_requests_total", { dialect, method, outcome });

describe("/metrics", () => {
  it("serves the Prometheus text format from a registry of each gateway's own", async () => {
    const first = await gateway();
    const second = await gateway();
    await first.askClient();

    const response = await fetch(`${first.httpUrl}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toContain("# TYPE tau_gateway_requests_total counter");
    expect(text).toContain("# TYPE tau_gateway_request_duration_seconds histogram");
    expect(text).toContain("# TYPE process_cpu_user_seconds_total counter");

    expect(sampleValue(await first.scrape(), "tau_gateway_connections_total", { route: "/rpc" })).toBe(1);
    expect(sampleValue(await second.scrape(), "tau_gateway_connections_total", { route: "/rpc" })).toBe(0);
  });

  it("moves with connections, requests by method and outcome, events, interactions and validation failures", async () => {
    const gw = await gateway();
    const ask = await gw.askClient();
    const tau = await gw.tauClient();

    let samples = await gw.scrape();
    for (const route of ["/rpc", "/tau"]) {
      expect(sampleValue(samples, "tau_gateway_connections", { route })).toBe(1);
      expect(sampleValue(samples, "tau_gateway_connections_total", { route })).toBe(1);
    }
    expect(requests(samples, "ask", "initialize", "ok")).toBe(1);
    expect(requests(samples, "tau", "initialize", "ok")).toBe(1);

    // Ask: a session, a turn waiting for the user, an invalid request.
    const { session } = await ask.request("session/create", {});
    const sessionId: string = session.sessionId;
    await ask.request("session/subscribe", { sessionId });
    await ask.request("session/send", { sessionId, content: '/tool ask_user {"question":"Which one?"}' });
    const question = await ask.waitForEvent(sessionId, "input.requested");
    expect(sampleValue(await gw.scrape(), "tau_gateway_pending_interactions")).toBe(1);
    await ask.request("interaction/respond", { sessionId, interactionId: (question.payload as { id: string }).id, response: "the first" });
    await ask.waitForEvent(sessionId, "turn.completed");
    const invalid = await ask.request("session/send", { content: "no session named" }).catch((err: unknown) => err);
    expect(invalid).toBeInstanceOf(RpcError);
    expect((invalid as RpcError).code).toBe(-32602);

    // Tau: a request relayed, one answered by the gateway as invalid.
    resultOf(await tau.request("session.list", {}));
    expect(errorOf(await tau.request("session.noSuchMethod", {})).code).toBe("method_not_found");

    samples = await gw.scrape();
    expect(requests(samples, "ask", "session/create", "ok")).toBe(1);
    expect(requests(samples, "ask", "session/send", "ok")).toBe(1);
    expect(requests(samples, "ask", "session/send", "invalid_params")).toBe(1);
    expect(requests(samples, "ask", "interaction/respond", "ok")).toBe(1);
    expect(requests(samples, "tau", "session.list", "ok")).toBe(1);
    expect(sampleValue(samples, "tau_gateway_request_duration_seconds_count", { dialect: "ask", method: "session/create" })).toBe(1);
    expect(sampleValue(samples, "tau_gateway_request_duration_seconds_count", { dialect: "tau", method: "session.list" })).toBe(1);
    expect(sampleValue(samples, "tau_gateway_validation_failures_total", { dialect: "ask", source: "client" })).toBe(1);
    expect(sampleValue(samples, "tau_gateway_validation_failures_total", { dialect: "tau", source: "client" })).toBe(1);
    expect(sampleValue(samples, "tau_gateway_validation_failures_total", { dialect: "tau", source: "upstream" })).toBe(0);
    expect(sampleValue(samples, "tau_gateway_pending_interactions")).toBe(0);

    // One session, one subscriber who saw everything: emitted = its last seq, delivered = what it received.
    const events = ask.eventsOf(sessionId);
    expect(sampleValue(samples, "tau_gateway_events_emitted_total")).toBe(events.at(-1)!.seq);
    expect(sampleValue(samples, "tau_gateway_events_delivered_total")).toBe(ask.events.length);
    expect(events.length).toBeGreaterThan(3);

    tau.socket.close();
    await waitUntil(async () => sampleValue(await gw.scrape(), "tau_gateway_connections", { route: "/tau" }) === 0, "the /tau gauge to drop");
    expect(sampleValue(await gw.scrape(), "tau_gateway_connections_total", { route: "/tau" })).toBe(1);
  });

  it("counts reconnects of the gateway's upstream connection", async () => {
    const gw = await gateway();
    expect(sampleValue(await gw.scrape(), "tau_gateway_upstream_reconnects_total")).toBe(0);
    const upstream = gw.stack.upstream!;
    const reconnected = new Promise<void>((resolve) => upstream.onConnected(({ reconnected }) => reconnected && resolve()));
    await gw.stopHost();
    await gw.startHost();
    await reconnected;
    expect(sampleValue(await gw.scrape(), "tau_gateway_upstream_reconnects_total")).toBe(1);
  });

  it("requires the token like every other route when the gateway has tokens", async () => {
    const gw = await gateway({ tokens: TokenRegistry.single("metrics-secret-token") });
    expect((await fetch(`${gw.httpUrl}/metrics`)).status).toBe(401);
    expect(sampleValue(await gw.scrape("metrics-secret-token"), "tau_gateway_connections_total", { route: "/rpc" })).toBe(0);
  });
});
