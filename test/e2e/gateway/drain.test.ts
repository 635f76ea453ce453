import type { FastifyInstance } from "fastify";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { AskSurface } from "../../../src/ask/ask-surface.js";
import { buildGateway } from "../../../src/gateway/app.js";
import { DrainController } from "../../../src/gateway/drain.js";
import { RpcError as ServerRpcError } from "../../../src/shared/rpc-error.js";
import { TauUpstream } from "../../../src/tau/upstream.js";
import { AskTestClient, RpcError } from "../../support/ask-client.js";
import { eventually } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { answerInitialize, startFakeTauPeer } from "../../support/fake-tau-peer.js";
import { postRpc, startHttpGateway } from "../../support/http-gateway.js";
import { SseTestClient } from "../../support/sse-client.js";
import { TauTestClient } from "../../support/tau-client.js";
import { askGatewayDialect } from "../../../src/cli/dialects/ask/gateway.js";

/**
 * Graceful drain: the controller on its own (refusal, waiting, the deadline), then the gateway
 * while it drains (readiness, new connections and requests refused on every surface, open
 * requests answered with an error at the deadline rather than dropped).
 */

const cleanups = cleanupsAfterEach();

const never = () => new Promise<never>(() => undefined);
const askError = (promise: Promise<unknown>) =>
  promise.then(
    (value) => {
      throw new Error(`expected an error, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error as ServerRpcError,
  );

describe("DrainController", () => {
  it("runs requests while serving and refuses new ones with a retryable -32012 once draining", async () => {
    const drain = new DrainController({ timeoutMs: 1000 });
    expect(await drain.gate("ping", async () => "pong")).toBe("pong");
    const outcome = drain.drain();
    expect(drain.draining).toBe(true);
    const refused = await askError(drain.gate("session/send", async () => "ran"));
    expect(refused).toBeInstanceOf(ServerRpcError);
    expect(refused.code).toBe(-32012);
    expect(refused.message).toMatch(/shutting down.*retry/);
    expect(refused.data).toMatchObject({ retryable: true });
    expect(await outcome).toEqual({ drained: true, failedRequests: 0, abandoned: {} });
  });

  it("waits for requests in flight, which finish normally", async () => {
    const drain = new DrainController({ timeoutMs: 60_000 });
    let finish!: (value: string) => void;
    const running = drain.gate("session/send", () => new Promise<string>((resolve) => (finish = resolve)));
    let drained = false;
    const outcome = drain.drain().then((o) => ((drained = true), o));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(drained).toBe(false);
    expect(drain.inFlight).toBe(1);
    finish("done");
    expect(await running).toBe("done");
    expect(await outcome).toEqual({ drained: true, failedRequests: 0, abandoned: {} });
  });

  it("waits for what its sources count", async () => {
    const drain = new DrainController({ timeoutMs: 60_000 });
    let open = 2;
    drain.addSource("turns", () => open);
    let drained = false;
    const outcome = drain.drain().then((o) => ((drained = true), o));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(drained).toBe(false);
    open = 0;
    expect(await outcome).toMatchObject({ drained: true });
  });

  it("at the deadline runs its deadline actions first: a request they bring to an end is answered, not failed", async () => {
    const drain = new DrainController({ timeoutMs: 30 });
    let open = 1;
    let finish!: (value: string) => void;
    const prompt = drain.gate("session/prompt", () => new Promise<string>((resolve) => (finish = resolve)));
    const budgets: number[] = [];
    drain.atDeadline(async (budgetMs) => {
      budgets.push(budgetMs);
      open = 0;
      finish("cancelled");
      return { interruptedTurns: 1 };
    });
    drain.addSource("turns", () => open);
    const outcome = await drain.drain();
    expect(await prompt).toBe("cancelled");
    expect(outcome).toEqual({ drained: false, failedRequests: 0, abandoned: { turns: 1 }, atDeadline: { interruptedTurns: 1 } });
    expect(budgets).toHaveLength(1);
    expect(budgets[0]).toBeGreaterThan(0);
  });

  it("runs no deadline action when everything finished in time", async () => {
    const drain = new DrainController({ timeoutMs: 1000 });
    let ran = false;
    drain.atDeadline(async () => ((ran = true), {}));
    expect(await drain.drain()).toEqual({ drained: true, failedRequests: 0, abandoned: {} });
    expect(ran).toBe(false);
  });

  it("fails requests still open at the deadline with -32012 and reports what was left", async () => {
    const drain = new DrainController({ timeoutMs: 30 });
    drain.addSource("turns", () => 1);
    const stuck = drain.gate("session/resume", never);
    const outcome = await drain.drain();
    expect(outcome).toEqual({ drained: false, failedRequests: 1, abandoned: { turns: 1 } });
    const error = await askError(stuck);
    expect(error.code).toBe(-32012);
    expect(error.message).toMatch(/drain timeout/);
    expect(error.data).toMatchObject({ reason: "drain_timeout" });
  });

  it("stops waiting when forced", async () => {
    const drain = new DrainController({ timeoutMs: 600_000 });
    const stuck = drain.gate("session/resume", never);
    const outcome = drain.drain();
    drain.force();
    expect(await outcome).toMatchObject({ drained: false, failedRequests: 1 });
    expect((await askError(stuck)).code).toBe(-32012);
  });
});

describe("the gateway while draining", () => {
  it("turns /readyz 503, refuses new requests on WebSocket and HTTP, and closes new WebSockets with 1001", async () => {
    const gw = await startHttpGateway({ drainTimeoutMs: 60_000 });
    cleanups.push(() => gw.stop());
    const wsUrl = gw.baseUrl.replace("http://", "ws://");
    expect((await fetch(`${gw.baseUrl}/readyz`)).status).toBe(200);
    const client = await AskTestClient.websocket(`${wsUrl}/rpc`);
    cleanups.push(() => client.socket.terminate());
    const created = await client.request("session/create", {});
    const sessionId = created.session.sessionId as string;

    // Work in flight keeps the drain open while the test looks around.
    let released = false;
    gw.drain.addSource("test hold", () => (released ? 0 : 1));
    const outcome = gw.drain.drain();

    const readyz = await fetch(`${gw.baseUrl}/readyz`);
    expect(readyz.status).toBe(503);
    expect(await readyz.json()).toMatchObject({ status: "draining" });
    expect((await fetch(`${gw.baseUrl}/healthz`)).status).toBe(200);

    const onOpenSocket = await client.request("ping").catch((e: unknown) => e);
    expect(onOpenSocket).toBeInstanceOf(RpcError);
    expect(onOpenSocket).toMatchObject({ code: -32012, data: { retryable: true } });

    const overHttp = await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 1, method: "session/send", params: { sessionId, content: "hi" } });
    expect(overHttp.body).toMatchObject({ id: 1, error: { code: -32012 } });

    const stream = await SseTestClient.open(`${gw.baseUrl}/rpc/events?sessionId=${sessionId}`);
    expect(stream.status).toBe(503);
    expect(JSON.parse(await stream.body())).toMatchObject({ error: { code: -32012 } });

    for (const path of ["/tau", "/rpc"]) {
      const socket = new WebSocket(`${wsUrl}${path}`);
      const closed = await new Promise<{ code: number; reason: string }>((resolve, reject) => {
        socket.once("close", (code, reason) => resolve({ code, reason: reason.toString() }));
        socket.once("error", reject);
      });
      expect(closed, path).toEqual({ code: 1001, reason: "gateway shutting down" });
    }

    released = true;
    expect(await outcome).toMatchObject({ drained: true });
    // Drained is not serving again.
    expect(await client.request("ping").catch((e: RpcError) => e.code)).toBe(-32012);
  });

  it("waits for a /tau client's turn in flight, which is answered before the socket closes with 1001", async () => {
    const gw = await startHttpGateway({ drainTimeoutMs: 60_000 });
    cleanups.push(() => gw.stop());
    const client = await TauTestClient.connect(`${gw.baseUrl.replace("http://", "ws://")}/tau`);
    cleanups.push(() => client.close());
    await client.initialize();
    const sessionId = await client.createSession(process.cwd());
    const submit = client.send("session.submit", { sessionId, text: "/sleep 500\ndone sleeping" });
    await client.waitForTurnRunning(sessionId);

    const outcome = await gw.drain.drain();
    expect(outcome).toEqual({ drained: true, failedRequests: 0, abandoned: {} });
    expect(client.hasResponse(submit.id)).toBe(true);
    expect(await submit.response).toMatchObject({ ok: true, result: { turn: { status: "completed" } } });
    await gw.app.close();
    expect(await client.closed()).toMatchObject({ code: 1001 });
  });

  it("answers an Ask request still open at the deadline with -32012 before its socket closes with 1001", async () => {
    // An upstream that accepts the connection but never answers session.observe: the request stays open.
    const peer = await startFakeTauPeer({ onRequest: (request, socket) => void answerInitialize(request, socket) });
    cleanups.push(() => peer.close());
    const upstream = new TauUpstream({ url: peer.url, client: { name: "drain-test", version: "1" }, reconnect: false });
    cleanups.push(() => upstream.close());
    const surface = new AskSurface({ upstream, defaultCwd: process.cwd(), serverVersion: "1" });
    surface.start();
    await upstream.start();
    const app: FastifyInstance = buildGateway({
      tauUpstream: { url: peer.url },
      upstream,
      dialects: [askGatewayDialect(surface, { jsonrpc: { jsonrpcMember: "include" } })],
      drainTimeoutMs: 100,
    });
    cleanups.push(() => app.close());
    const address = await app.listen({ host: "127.0.0.1", port: 0 });
    const client = await AskTestClient.websocket(`${address.replace("http://", "ws://")}/rpc`);
    cleanups.push(() => client.socket.terminate());
    const closed = new Promise<{ code: number; answeredFirst: boolean }>((resolve) =>
      client.socket.once("close", (code) => resolve({ code, answeredFirst: client.received.length > 0 })),
    );

    const open = client.request("session/resume", { sessionId: "never-answered" }).catch((e: unknown) => e);
    await eventually(() => peer.received.some((text) => text.includes("session.observe")), "session.observe upstream");
    const outcome = await app.drain.drain();
    expect(outcome).toMatchObject({ drained: false, failedRequests: 1 });
    expect(await open).toMatchObject({ code: -32012, message: expect.stringMatching(/drain timeout/) });

    await app.close();
    expect(await closed).toEqual({ code: 1001, answeredFirst: true });
  });
});
