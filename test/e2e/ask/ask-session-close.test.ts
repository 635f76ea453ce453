import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RawAcpClient } from "../../support/acp-raw-client.js";
import { AskTestClient, rpcError } from "../../support/ask-client.js";
import { eventually, expectContiguous, openSession, payloadsOf } from "../../support/ask-events.js";
import { describeOverAskTransports } from "../../support/ask-transports.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { serveCli } from "../../support/cli.js";
import { CodexTestClient } from "../../support/codex-client.js";
import { startTestGateway } from "../../support/gateway.js";
import { SseTestClient } from "../../support/sse-client.js";
import { snapshotOnHost, userTexts } from "../../support/tau-client.js";

/**
 * session/close as Ask hosts close a session, in the order a subscriber sees it: what waits for an
 * answer is cancelled, the running turn is interrupted and ends, `session.ended` comes last, and
 * from then on the session is gone for every connection of the gateway — while Tau, which cannot
 * delete a session, keeps it. Over stdio, WebSocket `/rpc` and the Unix socket, each gateway
 * behind a relay that can hold the Tau host's messages back; then what only HTTP has (the event
 * stream) and what only the process knows (its counters).
 */

const TERMINAL = ["turn.completed", "turn.failed", "turn.aborted"];

/** Resolves once `client` is told the session is not found (-32004): the close has begun. */
async function closeBegun(client: AskTestClient, sessionId: string): Promise<void> {
  for (;;) {
    const outcome = await client.request("session/resume", { sessionId }).then(
      () => undefined,
      (error: { code?: number }) => error.code,
    );
    if (outcome === -32004) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describeOverAskTransports("session/close", { relay: true }, (transport) => {
  it("a turn waiting on ask_user: the question is cancelled, the turn ends, session.ended is the last event", async () => {
    const client = await transport().client();
    const sessionId = await openSession(client);
    const { turnId } = await client.request("session/send", { sessionId, content: '/tool ask_user {"question":"Name?"}\n/sleep 20000' });
    const requested = await client.waitForEvent(sessionId, "input.requested");
    const interactionId = (requested.payload as { id: string }).id;

    expect(await client.request("session/close", { sessionId })).toEqual({ closed: true, sessionId });
    await client.waitForEvent(sessionId, "session.ended");
    const events = client.eventsOf(sessionId);
    const types = events.map((e) => e.type);
    expect(payloadsOf(events, "input.resolved")).toEqual([expect.objectContaining({ id: interactionId, status: "cancelled" })]);
    const terminals = events.filter((e) => TERMINAL.includes(e.type));
    expect(terminals).toHaveLength(1);
    expect(terminals[0]!.payload).toMatchObject({ turnId });
    expect(types.indexOf("input.resolved")).toBeLessThan(types.indexOf(terminals[0]!.type));
    expect(types.at(-1)).toBe("session.ended");
    expectContiguous(events);

    expect((await rpcError(client.request("interaction/respond", { sessionId, interactionId, response: "Ada" }))).code).toBe(-32004);
    expect(client.invalid).toEqual([]);
  });

  it("a running turn: every subscriber sees turn.aborted, then session.ended, then nothing; gone for every connection; Tau keeps it idle", async () => {
    const a = await transport().client();
    const b = await transport().another();
    const sessionId = await openSession(a);
    const kept = await openSession(a);
    await b.request("session/subscribe", { sessionId });
    const { turnId } = await a.request("session/send", { sessionId, content: "/sleep 20000\nnever said" });
    await a.waitForEvent(sessionId, "turn.started");
    expect(await a.request("session/send", { sessionId, content: "queued, never run", mode: "queue" })).toMatchObject({ status: "queued" });

    expect(await a.request("session/close", { sessionId })).toEqual({ closed: true, sessionId });
    for (const client of [a, b]) {
      await client.waitForEvent(sessionId, "session.ended");
      const events = client.eventsOf(sessionId);
      expect(events.filter((e) => TERMINAL.includes(e.type))).toEqual([{ type: "turn.aborted", seq: expect.any(Number), payload: { turnId } }]);
      expect(events.slice(-2).map((e) => e.type)).toEqual(["turn.aborted", "session.ended"]);
      expect(events.at(-1)!.payload).toEqual({ sessionId, reason: "closed" });
      expectContiguous(events);
    }

    // A connection opened afterwards: not listed, not reachable, not closable again.
    const c = await transport().another();
    const listed = (await c.request("session/list", { limit: 1000 })).sessions.map((s: { sessionId: string }) => s.sessionId);
    expect(listed).toContain(kept);
    expect(listed).not.toContain(sessionId);
    for (const method of ["session/resume", "session/subscribe", "session/events", "session/abort", "session/close", "session/artifacts", "interaction/list", "workspace/readState"]) {
      for (const client of [a, c]) expect((await rpcError(client.request(method, { sessionId }))).code, method).toBe(-32004);
    }
    expect((await rpcError(c.request("session/send", { sessionId, content: "x" }))).code).toBe(-32004);

    // Nothing ran on: the Tau session stays behind idle, the queued text never submitted.
    const snapshot = await snapshotOnHost(transport().hostUrl, sessionId);
    expect(snapshot.lifecycle).toBe("idle");
    expect(userTexts(snapshot)).toEqual(["/sleep 20000\nnever said"]);
    for (const client of [a, b]) expect(client.eventsOf(sessionId).at(-1)!.type).toBe("session.ended");
    expect([...a.invalid, ...b.invalid, ...c.invalid]).toEqual([]);
  });

  it("two connections closing at once: one closes it, the other is told it is not there", async () => {
    const a = await transport().client();
    const b = await transport().another();
    const sessionId = await openSession(a);
    await a.request("session/send", { sessionId, content: "/sleep 20000" });
    await a.waitForEvent(sessionId, "turn.started");
    const outcomes = await Promise.allSettled([a.request("session/close", { sessionId }), b.request("session/close", { sessionId })]);
    const closed = outcomes.filter((o) => o.status === "fulfilled").map((o) => (o as PromiseFulfilledResult<unknown>).value);
    const refused = outcomes.filter((o) => o.status === "rejected").map((o) => (o as PromiseRejectedResult).reason as { code: number });
    expect(closed).toEqual([{ closed: true, sessionId }]);
    expect(refused.map((e) => e.code)).toEqual([-32004]);
    await a.waitForEvent(sessionId, "session.ended");
    expect(payloadsOf(a.eventsOf(sessionId), "session.ended")).toHaveLength(1);
    expect([...a.invalid, ...b.invalid]).toEqual([]);
  });

  it("a send from another connection already on its way to Tau when the close begins: its turn starts, is interrupted and ends before session.ended", async () => {
    const { relay, hostUrl } = transport();
    const a = await transport().client();
    const b = await transport().another();
    const watcher = await transport().another();
    const sessionId = await openSession(a);

    // The send reaches the host, which starts the turn; its news waits in the relay.
    const submitted = relay!.count("session.submit");
    relay!.hold();
    const sent = b.request("session/send", { sessionId, content: "/sleep 20000\nnever said" });
    await eventually(() => relay!.count("session.submit") === submitted + 1, "the send's session.submit at the host");
    const closed = a.request("session/close", { sessionId });
    await closeBegun(watcher, sessionId);
    relay!.release();

    expect(await closed).toEqual({ closed: true, sessionId });
    const { turnId } = await sent;
    await a.waitForEvent(sessionId, "session.ended");
    const events = a.eventsOf(sessionId);
    expect(events.map((e) => e.type)).toEqual(["session.created", "turn.started", "user.message", "turn.aborted", "session.ended"]);
    expect(payloadsOf(events, "turn.started")).toEqual([{ turnId }]);
    expect(payloadsOf(events, "turn.aborted")).toEqual([{ turnId }]);
    expect((await snapshotOnHost(hostUrl, sessionId)).lifecycle).toBe("idle");
    expect([...a.invalid, ...b.invalid, ...watcher.invalid]).toEqual([]);
  });
});

describe("session/close beyond the connection", () => {
  const cleanups = cleanupsAfterEach();

  it("ends an event stream (GET /rpc/events) after its session.ended; reconnecting finds no session", async () => {
    const gw = await cleanups.stopAfterTest(startTestGateway());
    const client = await gw.client();
    const sessionId = await openSession(client);
    const eventsUrl = `${gw.rpcUrl.replace("ws://", "http://")}/events?sessionId=${sessionId}`;
    const stream = await SseTestClient.open(eventsUrl);
    cleanups.push(() => stream.close());
    expect(stream.status).toBe(200);
    const { turnId } = await client.request("session/send", { sessionId, content: "/sleep 20000" });
    await stream.waitForEvent("turn.started");

    await client.request("session/close", { sessionId });
    await stream.waitFor(() => stream.ended, "the stream to end", 10_000);
    const events = stream.events().map((e) => e.event);
    expect(events.slice(-2)).toEqual([
      { type: "turn.aborted", seq: expect.any(Number), payload: { turnId } },
      { type: "session.ended", seq: expect.any(Number), payload: { sessionId, reason: "closed" } },
    ]);
    expect(stream.frames.at(-1)!.id).toBe(String(events.at(-1)!.seq));

    // An EventSource reconnects after the end; the closed session answers 404, which stops it.
    const again = await SseTestClient.open(eventsUrl, { headers: { "last-event-id": String(events.at(-1)!.seq) } });
    expect(again.status).toBe(404);
    expect(JSON.parse(await again.body())).toMatchObject({ error: { code: -32004 } });
  });

  it("is gone for the other dialects too: Codex thread/list and ACP session/list leave it out, thread/resume and session/load find nothing", async () => {
    // Every dialect on one real `serve` process.
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "tau-gateway-close-")));
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
    const gateway = await serveCli(["--port", "0", "--default-cwd", cwd, "--log-level", "warn"], cleanups);
    const wsUrl = gateway.baseUrl.replace("http://", "ws://");
    const client = await AskTestClient.websocket(`${wsUrl}/rpc`);
    cleanups.push(() => client.socket.terminate());
    const [closed, open] = [await openSession(client), await openSession(client)];
    const codex = await CodexTestClient.websocket(wsUrl);
    cleanups.push(() => codex.socket.terminate());
    await codex.initialize();
    const acpClient = await RawAcpClient.connect(`${wsUrl}/acp`);
    cleanups.push(() => acpClient.close());
    await acpClient.initialize();
    const listed = async () => ({
      codex: ((await codex.request("thread/list", {})).data as Array<{ id: string }>).map((t) => t.id).sort(),
      acp: ((await acpClient.request("session/list", {})).result.sessions as Array<{ sessionId: string }>).map((s) => s.sessionId).sort(),
    });
    expect(await listed()).toEqual({ codex: [closed, open].sort(), acp: [closed, open].sort() });

    await client.request("session/close", { sessionId: closed });
    expect(await listed()).toEqual({ codex: [open], acp: [open] });
    const resumed = await codex.request("thread/resume", { threadId: closed }).then(
      () => undefined,
      (error: { code?: number; message?: string }) => error,
    );
    expect(resumed?.code).toBe(-32600);
    expect(resumed?.message).toContain(`thread not found: ${closed}`);
    const loaded = await acpClient.request("session/load", { sessionId: closed, cwd, mcpServers: [] });
    expect(loaded.error).toMatchObject({ code: expect.any(Number) });
    expect(codex.invalid).toEqual([]);
  });

  it("the counters keep what a closed session counted (the metrics are counters)", async () => {
    const gw = await cleanups.stopAfterTest(startTestGateway());
    const client = await gw.client();
    const sessionId = await openSession(client);
    const emitted = gw.stack.ask!.stats.eventsEmitted;
    await client.request("session/close", { sessionId });
    // session.ended is counted, and nothing of the session is lost from the total.
    expect(gw.stack.ask!.stats.eventsEmitted).toBe(emitted + 1);
  });
});
