import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AskTestClient } from "../../support/ask-client.js";
import { openSession } from "../../support/ask-events.js";
import { Cleanups } from "../../support/cleanups.js";
import { serveCli, type ServingCli } from "../../support/cli.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { TauTestClient } from "../../support/tau-client.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../../support/otlp-receiver.js";

/**
 * OpenTelemetry traces of the real `serve` process, exported over OTLP/HTTP (JSON) to a receiver
 * in the test: the trace context a client sends becomes the parent of the gateway's span of its
 * call, and the gateway's calls to Tau are children of that span.
 */

const SERVER = 2;
const CLIENT = 3;

/** A fresh W3C traceparent: a trace id and the client's own span id, sampled. */
function clientContext(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString("hex");
  const spanId = randomBytes(8).toString("hex");
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const cleanups = new Cleanups();
let receiver: OtlpReceiver;
let gateway: ServingCli;
let wsUrl: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  cleanups.push(() => receiver.close());
  gateway = await serveCli(["--port", "0", "--log-level", "warn"], cleanups, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: "gateway-under-test",
    // Export each batch soon, so the test waits for spans instead of the default 5 s.
    OTEL_BSP_SCHEDULE_DELAY: "50",
  });
  wsUrl = gateway.baseUrl.replace("http://", "ws://");
}, 60_000);

afterAll(() => cleanups.runNewestFirst());

/** The spans of one trace, once `predicate` holds for them. */
async function traceOf(traceId: string, predicate: (spans: ReceivedSpan[]) => boolean, what: string): Promise<ReceivedSpan[]> {
  const inTrace = (spans: ReceivedSpan[]) => spans.filter((s) => s.traceId === traceId);
  await receiver.until((spans) => predicate(inTrace(spans)), what);
  return inTrace(receiver.spans);
}

describe("OpenTelemetry traces", () => {
  it("an Ask session/send under the WebSocket upgrade's traceparent: the gateway's span is its child, the Tau call the span's", async () => {
    const ctx = clientContext();
    const client = await AskTestClient.websocket(`${wsUrl}/rpc`, { headers: { traceparent: ctx.traceparent } });
    cleanups.push(() => client.socket.terminate());
    const sessionId = await openSession(client);
    await client.request("session/send", { sessionId, content: "Hello" });

    const spans = await traceOf(ctx.traceId, (s) => s.some((span) => span.name === "ask session/send") && s.some((span) => span.name === "tau session.submit"), "ask session/send with its Tau call");
    const send = spans.find((s) => s.name === "ask session/send")!;
    expect(send).toMatchObject({ kind: SERVER, parentSpanId: ctx.spanId, service: "gateway-under-test" });
    expect(send.attributes).toMatchObject({ "rpc.system": "jsonrpc", "rpc.method": "session/send", dialect: "ask", "session.id": sessionId });
    const submit = spans.find((s) => s.name === "tau session.submit")!;
    expect(submit).toMatchObject({ kind: CLIENT, parentSpanId: send.spanId });
    expect(submit.attributes).toMatchObject({ "rpc.system": "tau", "rpc.method": "session.submit", "tau.session.id": sessionId });
    // The other calls on the connection are in the same trace, each under the client's span.
    const create = spans.find((s) => s.name === "ask session/create")!;
    expect(create.parentSpanId).toBe(ctx.spanId);
    expect(spans.find((s) => s.name === "tau session.create")?.parentSpanId).toBe(create.spanId);
  });

  it("a POST /rpc request under the request's traceparent header", async () => {
    const ctx = clientContext();
    const response = await fetch(`${gateway.baseUrl}/rpc`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: ctx.traceparent },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/list", params: {} }),
    });
    expect(response.status).toBe(200);
    const spans = await traceOf(ctx.traceId, (s) => s.some((span) => span.name === "ask session/list"), "ask session/list");
    expect(spans.find((s) => s.name === "ask session/list")).toMatchObject({ kind: SERVER, parentSpanId: ctx.spanId });
  });

  it("a Codex turn/start under its request's `trace` field, which wins over the upgrade's", async () => {
    const upgrade = clientContext();
    const request = clientContext();
    const codex = await CodexTestClient.websocket(wsUrl, { traceparent: upgrade.traceparent });
    cleanups.push(() => codex.socket.terminate());
    await codex.initialize();
    const { thread } = await codex.request("thread/start", {});
    codex.send({ id: 9001, method: "turn/start", params: { threadId: thread.id, input: [{ type: "text", text: "Hello", text_elements: [] }] }, trace: { traceparent: request.traceparent } });
    await codex.waitFor((m) => m.id === 9001);

    const spans = await traceOf(request.traceId, (s) => s.some((span) => span.name === "codex turn/start") && s.some((span) => span.name === "tau session.submit"), "codex turn/start with its Tau call");
    const turnStart = spans.find((s) => s.name === "codex turn/start")!;
    expect(turnStart).toMatchObject({ kind: SERVER, parentSpanId: request.spanId });
    expect(turnStart.attributes).toMatchObject({ "rpc.system": "jsonrpc", "rpc.method": "turn/start", dialect: "codex", "session.id": thread.id });
    expect(spans.find((s) => s.name === "tau session.submit")).toMatchObject({ kind: CLIENT, parentSpanId: turnStart.spanId });
    // thread/start carried no `trace`: it continues the upgrade's trace.
    const upgradeSpans = await traceOf(upgrade.traceId, (s) => s.some((span) => span.name === "codex thread/start"), "codex thread/start");
    expect(upgradeSpans.find((s) => s.name === "codex thread/start")?.parentSpanId).toBe(upgrade.spanId);
  });

  it("an ACP request under its `_meta.traceparent`; a failed call carries its error code", async () => {
    const ctx = clientContext();
    const acp = await RawAcpClient.connect(`${wsUrl}/acp`);
    cleanups.push(() => acp.close());
    await acp.initialize();
    const created = await acp.request("session/new", { cwd: process.cwd(), mcpServers: [], _meta: { traceparent: ctx.traceparent } });
    expect(created.error).toBeUndefined();
    const failed = await acp.request("session/load", { sessionId: "no-such-session", cwd: process.cwd(), mcpServers: [], _meta: { traceparent: ctx.traceparent } });
    expect(failed.error).toMatchObject({ code: expect.any(Number) });

    const spans = await traceOf(ctx.traceId, (s) => s.some((span) => span.name === "acp session/new") && s.some((span) => span.name === "acp session/load"), "acp session/new and session/load");
    const created_ = spans.find((s) => s.name === "acp session/new")!;
    expect(created_).toMatchObject({ kind: SERVER, parentSpanId: ctx.spanId });
    expect(spans.filter((s) => s.parentSpanId === created_.spanId && s.kind === CLIENT).map((s) => s.name)).toContain("tau session.create");
    const load = spans.find((s) => s.name === "acp session/load")!;
    expect(load.status.code).toBe(2);
    expect(load.attributes["rpc.jsonrpc.error_code"]).toBe(failed.error.code);
  });

  it("a request relayed by /tau under the upgrade's traceparent: the client's call, and the relayed request under it", async () => {
    const ctx = clientContext();
    const tau = await TauTestClient.connect(`${wsUrl}/tau`, "traced", { traceparent: ctx.traceparent });
    cleanups.push(() => tau.close());
    expect((await tau.call<{ sessions: unknown[] }>("session.list", {})).sessions).toEqual(expect.any(Array));
    await expect(tau.call("session.snapshot", { sessionId: "no-such-session" })).rejects.toThrow();

    const spans = await traceOf(ctx.traceId, (s) => s.filter((span) => span.name === "tau session.snapshot").length === 2 && s.some((span) => span.name === "tau session.list" && span.kind === CLIENT), "the relayed requests");
    const call = spans.find((s) => s.name === "tau session.list" && s.kind === SERVER)!;
    expect(call.parentSpanId).toBe(ctx.spanId);
    expect(call.attributes).toMatchObject({ "rpc.system": "tau", "rpc.method": "session.list", dialect: "tau" });
    expect(spans.find((s) => s.name === "tau session.list" && s.kind === CLIENT)?.parentSpanId).toBe(call.spanId);
    const failed = spans.find((s) => s.name === "tau session.snapshot" && s.kind === SERVER)!;
    expect(failed.status.code).toBe(2);
    expect(failed.attributes["error.type"]).toEqual(expect.any(String));
    expect(spans.find((s) => s.name === "tau session.snapshot" && s.kind === CLIENT)?.parentSpanId).toBe(failed.spanId);
  });
});

describe("without OTEL_* variables", () => {
  it("serve exports nothing, also when an endpoint is set but the SDK is disabled", async () => {
    const quiet = await startOtlpReceiver();
    cleanups.push(() => quiet.close());
    const served = await serveCli(["--port", "0", "--log-level", "warn"], cleanups, { OTEL_EXPORTER_OTLP_ENDPOINT: quiet.url, OTEL_SDK_DISABLED: "true", OTEL_BSP_SCHEDULE_DELAY: "50" });
    const client = await AskTestClient.websocket(`${served.baseUrl.replace("http://", "ws://")}/rpc`, { headers: { traceparent: clientContext().traceparent } });
    const sessionId = await openSession(client);
    await client.request("session/send", { sessionId, content: "Hello" });
    client.socket.terminate();
    // A running SDK exports what it holds when serve shuts down: after the exit, nothing can come.
    served.child.kill("SIGTERM");
    expect((await served.exit).code).toBe(0);
    expect(quiet.paths).toEqual([]);
  });
});
