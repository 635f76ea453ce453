import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnAcpAgent } from "../../support/acp-process.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { spawnOwnedCli } from "../../support/cli.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../../support/otlp-receiver.js";

/**
 * OpenTelemetry traces of the stdio commands, as real processes a client spawned: with the OTEL_*
 * variables they trace every call as `serve` does, the trace context a request carries (Codex's
 * `trace`, ACP's `_meta`) becomes the parent of the gateway's span of it, and the Tau calls are
 * children of that span. The batch delay is longer than the test: the spans reach the receiver
 * only because the command exports what it holds when it exits.
 */

const SERVER = 2;
const CLIENT = 3;

const cleanups = cleanupsAfterEach();
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());

/** A fresh W3C traceparent: a trace id and the client's own span id, sampled. */
function clientContext(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString("hex");
  const spanId = randomBytes(8).toString("hex");
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** Tracing on, exporting to the receiver, each batch held until the process exits. */
const tracingEnv = (service: string): NodeJS.ProcessEnv => ({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: service, OTEL_BSP_SCHEDULE_DELAY: "600000" });

const spansOf = (traceId: string): ReceivedSpan[] => receiver.spans.filter((span) => span.traceId === traceId);

describe("tau-gateway app-server with OTEL_* set", () => {
  it("traces a turn/start under its request's `trace`, the Tau call under it, and exports the spans when it exits", async () => {
    const { child, exit, stderr } = spawnOwnedCli(["app-server"], cleanups, tracingEnv("app-server-under-test"));
    const codex = new CodexTestClient((line) => child.stdin!.write(`${line}\n`));
    createInterface({ input: child.stdout! }).on("line", (line) => codex.receive(line));
    await codex.initialize();
    const { thread } = await codex.request("thread/start", {});
    const ctx = clientContext();
    codex.send({ id: 9001, method: "turn/start", params: { threadId: thread.id, input: [{ type: "text", text: "Hello", text_elements: [] }] }, trace: { traceparent: ctx.traceparent } });
    await codex.waitFor((m) => m.method === "turn/completed");
    // Nothing exported yet: the batch waits for the exit.
    expect(spansOf(ctx.traceId)).toEqual([]);

    child.stdin!.end();
    expect(await exit).toEqual({ code: 0, signal: null });
    const spans = spansOf(ctx.traceId);
    const turnStart = spans.find((s) => s.name === "codex turn/start");
    expect(turnStart, `spans: ${spans.map((s) => s.name).join(", ")}; stderr: ${stderr()}`).toMatchObject({ kind: SERVER, parentSpanId: ctx.spanId, service: "app-server-under-test" });
    expect(turnStart!.attributes).toMatchObject({ "rpc.system": "jsonrpc", "rpc.method": "turn/start", dialect: "codex", "session.id": thread.id });
    expect(spans.find((s) => s.name === "tau session.submit")).toMatchObject({ kind: CLIENT, parentSpanId: turnStart!.spanId });
    // thread/start carried no trace context: its span starts a trace of its own.
    expect(receiver.spans.find((s) => s.name === "codex thread/start" && s.service === "app-server-under-test")?.parentSpanId).toBe("");
  }, 60_000);
});

describe("tau-gateway acp with OTEL_* set", () => {
  it("traces a session/prompt under its `_meta.traceparent`, the Tau call under it, and exports the spans on SIGTERM", async () => {
    const agent = spawnAcpAgent([], cleanups, tracingEnv("acp-under-test"));
    agent.write({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
    await agent.next((m) => m.id === 1);
    agent.write({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: process.cwd(), mcpServers: [] } });
    const { sessionId } = (await agent.next((m) => m.id === 2)).result;
    const ctx = clientContext();
    agent.write({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "Hello" }], _meta: { traceparent: ctx.traceparent } } });
    expect((await agent.next((m) => m.id === 3)).result).toEqual({ stopReason: "end_turn" });
    expect(spansOf(ctx.traceId)).toEqual([]);

    agent.child.kill("SIGTERM");
    expect(await agent.exit).toEqual({ code: 0, signal: null });
    const spans = spansOf(ctx.traceId);
    const prompt = spans.find((s) => s.name === "acp session/prompt");
    expect(prompt, `spans: ${spans.map((s) => s.name).join(", ")}; stderr: ${agent.stderr()}`).toMatchObject({ kind: SERVER, parentSpanId: ctx.spanId, service: "acp-under-test" });
    expect(prompt!.attributes).toMatchObject({ "rpc.method": "session/prompt", dialect: "acp", "session.id": sessionId });
    expect(spans.find((s) => s.name === "tau session.submit")).toMatchObject({ kind: CLIENT, parentSpanId: prompt!.spanId });
  }, 60_000);
});
