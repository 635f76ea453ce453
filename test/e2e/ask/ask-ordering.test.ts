import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import type { CommandToolConfig } from "../../../src/bridge/interactions/index.js";
import { BridgeStack } from "../../../src/cli/bridge-stack.js";
import { buildGateway } from "../../../src/gateway/app.js";
import { startTauHost } from "../../../src/host/index.js";
import { AskTestClient, RpcError } from "../../support/ask-client.js";
import { describeOverAskTransports } from "../../support/ask-transports.js";
import { eventually, expectContiguous, expectOneTerminalPerTurn, openSession, payloadsOf, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startCountingRelay } from "../../support/counting-relay.js";
import { startTestGateway } from "../../support/gateway.js";
import { postRpc } from "../../support/http-gateway.js";
import { parsePrometheus, sampleValue } from "../../support/prometheus.js";
import { askGatewayDialect } from "../../../src/cli/dialects/ask/gateway.js";

/**
 * The order of what one Ask connection writes, line by line, as an Ask host writes it: a response
 * before the events its request causes, and a connection's requests applied and answered in the
 * order they arrived. Over `tau-gateway stdio` (spawned, as ask-terminal spawns its host), WebSocket
 * `/rpc` and the Unix socket; batches on `POST /rpc`; and how the order meets the in-flight limit, the drain
 * and reverse requests, with a relay that holds the Tau host's answers to keep a request open.
 */

const cleanups = cleanupsAfterEach();

/** What a received line is, for comparing whole sequences: `response <id>` or `event <seq> <type>`. */
function lineKind(message: unknown): string {
  const m = message as { id?: unknown; method?: string; params?: { event: Event } };
  if (m.method === "session/event") return `event ${m.params!.event.seq} ${m.params!.event.type}`;
  if (m.method !== undefined) return `request ${m.method}`;
  return `response ${String(m.id)}`;
}

/** The responses received since `mark`, by id, in the order they arrived. */
const responseIds = (client: AskTestClient, mark: number) =>
  client.received
    .slice(mark)
    .map(lineKind)
    .filter((kind) => kind.startsWith("response "));

/** Sends requests back to back, before any answer can arrive; returns their ids and answers. */
function pipeline(client: AskTestClient, calls: Array<[method: string, params?: unknown]>) {
  return calls.map(([method, params]) => {
    const answer = client.request(method, params);
    answer.catch(() => undefined);
    return { id: client.lastRequestId, answer };
  });
}

/** Waits for the turn to end without subscribing (session/events), so the log has events no connection was sent. */
async function waitForTurnInLog(client: AskTestClient, sessionId: string): Promise<Event[]> {
  for (;;) {
    const { events } = (await client.request("session/events", { sessionId })) as { events: Event[] };
    if (events.some((e) => e.type === "turn.completed")) return events;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describeOverAskTransports("one connection's order", {}, (transport) => {
  const connect = () => transport().client();

  it("session/subscribe with a backlog: the response line first, then the backlog in seq order", async () => {
    const client = await connect();
    const { session } = await client.request("session/create", {});
    const sessionId: string = session.sessionId;
    await client.request("session/send", { sessionId, content: "/think first\nHello" });
    const logged = await waitForTurnInLog(client, sessionId);

    const mark = client.received.length;
    const subscribed = client.request("session/subscribe", { sessionId });
    const id = client.lastRequestId;
    await subscribed;
    await client.waitFor(() => client.eventsOf(sessionId).length === logged.length, "the whole backlog");
    expect(client.received.slice(mark).map(lineKind)).toEqual([`response ${id}`, ...logged.map((e) => `event ${e.seq} ${e.type}`)]);
    expect(client.eventsOf(sessionId)).toEqual(logged);
  });

  it("session/send on an idle session: the response line before turn.started, thinking and tool.use", async () => {
    const client = await connect();
    const sessionId = await openSession(client);
    await client.waitFor(() => client.eventsOf(sessionId).length === 1, "session.created");

    const mark = client.received.length;
    const sent = client.request("session/send", { sessionId, content: "/think weighing it up\n/bash echo ordered\nHello" });
    const id = client.lastRequestId;
    const { turnId } = await sent;
    await waitForTerminal(client, sessionId, turnId);
    const lines = client.received.slice(mark).map(lineKind);
    expect(lines.slice(0, 2)).toEqual([`response ${id}`, "event 2 turn.started"]);
    expect(lines.slice(1).every((kind) => kind.startsWith("event "))).toBe(true);
    const { events } = await client.request("session/events", { sessionId });
    expect(client.eventsOf(sessionId)).toEqual(events);
    expect(events.map((e: Event) => e.type)).toEqual(expect.arrayContaining(["model.thinking", "tool.use", "tool.result", "turn.completed"]));
  });

  it("pipelined 1, 2, 3 with a slow request in the middle: answered 1, 2, 3", async () => {
    const client = await connect();
    const { session } = await client.request("session/create", {});
    const mark = client.received.length;
    // workspace/readState waits for a command run in the session; ping waits for nothing.
    const calls = pipeline(client, [["ping"], ["workspace/readState", { sessionId: session.sessionId }], ["ping"]]);
    const [first, slow, third] = await Promise.all(calls.map((c) => c.answer));
    expect(first).toMatchObject({ status: "ok" });
    expect(slow).toMatchObject({ workspace: { sessionId: session.sessionId } });
    expect(third).toMatchObject({ status: "ok" });
    expect(responseIds(client, mark)).toEqual(calls.map((c) => `response ${c.id}`));
  });

  it("test_multiple_requests_get_correct_ids (ask-app-server): requests written together each get their own answer, in the order sent", async () => {
    const client = await connect();
    const mark = client.received.length;
    const calls = pipeline(client, [["initialize", { clientName: "ordering" }], ["ping"], ["session/create", {}], ["session/list", {}], ["ping"]]);
    const [initialized, pinged, created, listed, pingedAgain] = await Promise.all(calls.map((c) => c.answer));
    expect(responseIds(client, mark)).toEqual(calls.map((c) => `response ${c.id}`));
    expect(initialized).toMatchObject({ protocolVersion: "1.0" });
    expect(pinged).toMatchObject({ status: "ok" });
    expect(created).toMatchObject({ session: { sessionId: expect.any(String) } });
    expect(listed.sessions.map((s: { sessionId: string }) => s.sessionId)).toContain(created.session.sessionId);
    expect(pingedAgain).toMatchObject({ status: "ok", sessions: pinged.sessions + 1 });
    expect(client.invalid).toEqual([]);
  });

  it("session/resume pipelined right after session/send sees the turn that send started", async () => {
    const client = await connect();
    const sessionId = await openSession(client);
    await client.waitFor(() => client.eventsOf(sessionId).length === 1, "session.created");
    const mark = client.received.length;
    const calls = pipeline(client, [
      ["session/send", { sessionId, content: "/sleep 300\nHello" }],
      ["session/resume", { sessionId }],
    ]);
    const [sent, resumed] = await Promise.all(calls.map((c) => c.answer));
    expect(sent).toMatchObject({ accepted: true, status: "steered" });
    expect(resumed).toMatchObject({ sessionId, running: true, idle: false });
    expect(responseIds(client, mark)).toEqual(calls.map((c) => `response ${c.id}`));
    // Both responses precede the turn's events.
    await client.waitForEvent(sessionId, "turn.started");
    expect(client.received.slice(mark, mark + 3).map(lineKind)).toEqual([...calls.map((c) => `response ${c.id}`), "event 2 turn.started"]);
    await waitForTerminal(client, sessionId, sent.turnId);
  });

  it("events keep their seq order, once each, while the connection's requests come and go", async () => {
    const client = await connect();
    const sessionId = await openSession(client);
    const { turnId } = await client.request("session/send", {
      sessionId,
      content: `/think ${"pondering ".repeat(40)}\n/bash sleep 0.5; echo one\n/bash echo two\n${"streamed text ".repeat(60)}`,
    });
    // Keep requests open (each holding the events that arise meanwhile) until the turn ends.
    let rounds = 0;
    while (!client.eventsOf(sessionId).some((e) => e.type === "turn.completed")) {
      await Promise.all([client.request("workspace/readState", { sessionId }), client.request("ping"), client.request("session/events", { sessionId, limit: 1 })]);
      rounds++;
    }
    expect(rounds).toBeGreaterThan(0);
    await waitForTerminal(client, sessionId, turnId);
    const { events } = await client.request("session/events", { sessionId });
    expect(client.eventsOf(sessionId)).toEqual(events);
    expectContiguous(client.eventsOf(sessionId));
    expectOneTerminalPerTurn(client.eventsOf(sessionId));
  });
});

describe("POST /rpc", () => {
  it("applies a batch in array order and answers it in that order: session/resume after session/send sees the turn", async () => {
    const gw = await cleanups.stopAfterTest(startTestGateway());
    const baseUrl = gw.rpcUrl.replace("ws://", "http://").replace(/\/rpc$/, "");
    const created = await postRpc(baseUrl, { jsonrpc: "2.0", id: 1, method: "session/create", params: {} });
    const sessionId = created.body.result.session.sessionId as string;
    const batch = await postRpc(baseUrl, [
      { jsonrpc: "2.0", id: "send", method: "session/send", params: { sessionId, content: "/sleep 300\nHello" } },
      { jsonrpc: "2.0", id: "resume", method: "session/resume", params: { sessionId } },
      { jsonrpc: "2.0", id: "ping", method: "ping" },
    ]);
    expect(batch.body.map((r: { id: string }) => r.id)).toEqual(["send", "resume", "ping"]);
    expect(batch.body[1].result).toMatchObject({ running: true });
  });
});

/**
 * A gateway whose bridge connection reaches the Tau host through a relay that can hold the host's
 * answers back: a request waiting for one stays open for as long as the test holds it.
 */
async function gatewayBehindRelay(options: { maxInflight?: number; commandTools?: CommandToolConfig[] } = {}) {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "ask-ordering-")));
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  const host = await startTauHost({ port: 0 });
  cleanups.push(() => host.close());
  const relay = await startCountingRelay(host.url);
  cleanups.push(() => relay.close());
  const stack = new BridgeStack();
  cleanups.push(() => stack.close());
  await stack.start({ upstream: relay.url, defaultCwd: cwd, eventRetention: 10_000, interactionTimeoutMs: 300_000 }, options.commandTools ?? [], () => undefined);
  const app = buildGateway({
    tauUpstream: { url: host.url },
    upstream: stack.upstream!,
    dialects: [askGatewayDialect(stack.ask!, { jsonrpc: { jsonrpcMember: "include" } })],
    limits: options.maxInflight === undefined ? undefined : { maxInflight: options.maxInflight },
    drainTimeoutMs: 60_000,
  });
  cleanups.push(() => app.close());
  const address = await app.listen({ host: "127.0.0.1", port: 0 });
  const client = await AskTestClient.websocket(`${address.replace("http://", "ws://")}/rpc`);
  // Newest first: the relay lets go of what it holds before anything closes.
  cleanups.push(() => client.socket.terminate());
  cleanups.push(() => relay.release());
  const requestsTotal = async (method: string, outcome: string) =>
    sampleValue(parsePrometheus(await app.metrics.text()), "tau_gateway_requests_total", { dialect: "ask", method, outcome });
  return { app, relay, stack, client, requestsTotal };
}

describe("the order and the gates", () => {
  it("a queued request counts toward --max-inflight; the refusal is answered at its place, after the requests before it", async () => {
    const { relay, client, requestsTotal } = await gatewayBehindRelay({ maxInflight: 2 });
    const { session } = await client.request("session/create", {});
    relay.hold();
    const mark = client.received.length;
    const calls = pipeline(client, [["workspace/readState", { sessionId: session.sessionId }], ["session/list", {}], ["ping"]]);
    // readState waits for the held answer, session/list waits behind it, ping is one too many.
    await eventually(() => relay.count("session.exec") === 1, "readState's command at the host");
    for (;;) {
      if ((await requestsTotal("ping", "overloaded")) === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(responseIds(client, mark)).toEqual([]);
    relay.release();
    const [readState, listed, refused] = await Promise.allSettled(calls.map((c) => c.answer));
    expect(readState).toMatchObject({ status: "fulfilled" });
    expect(listed).toMatchObject({ status: "fulfilled" });
    expect(refused).toMatchObject({ status: "rejected", reason: expect.objectContaining({ code: -32013 }) });
    expect(responseIds(client, mark)).toEqual(calls.map((c) => `response ${c.id}`));
  });

  it("a request queued when the drain starts was accepted: it runs and is answered; one arriving later is refused, at its place", async () => {
    const { app, relay, client } = await gatewayBehindRelay();
    const { session } = await client.request("session/create", {});
    relay.hold();
    const mark = client.received.length;
    const queued = pipeline(client, [["workspace/readState", { sessionId: session.sessionId }], ["session/list", {}]]);
    await eventually(() => relay.count("session.exec") === 1, "readState's command at the host");
    // Both requests and readState's command upstream are work in flight.
    await eventually(() => app.drain.inFlight === 3, "both requests counted in flight");
    const outcome = app.drain.drain();
    const late = pipeline(client, [["ping"]]);
    relay.release();
    const [readState, listed, refused] = await Promise.allSettled([...queued, ...late].map((c) => c.answer));
    expect(readState).toMatchObject({ status: "fulfilled" });
    expect(listed).toMatchObject({ status: "fulfilled", value: { sessions: [expect.objectContaining({ sessionId: session.sessionId })] } });
    expect(refused).toMatchObject({ status: "rejected", reason: expect.objectContaining({ code: -32012 }) });
    expect(((refused as PromiseRejectedResult).reason as RpcError).data).toMatchObject({ reason: "draining" });
    expect(responseIds(client, mark)).toEqual([...queued, ...late].map((c) => `response ${c.id}`));
    expect(await outcome).toMatchObject({ drained: true, failedRequests: 0 });
  });

  it("the answer to interaction/requestPermission is taken while the connection's own request waits", async () => {
    const echo: CommandToolConfig = { name: "echo_json", description: "Echoes its JSON arguments.", parameters: { type: "object" }, command: "cat" };
    const { relay, stack, client } = await gatewayBehindRelay({ commandTools: [echo] });
    let decide: ((answer: unknown) => void) | undefined;
    client.reverse = () => new Promise((resolve) => (decide = resolve));
    const sessionId = await openSession(client, { capabilities: ["reverseRequests"] });
    const { turnId } = await client.request("session/send", { sessionId, content: '/tool echo_json {"a":1}' });
    await client.waitFor(() => decide !== undefined, "interaction/requestPermission");

    relay.hold();
    let readStateAnswered = false;
    const readState = client.request("workspace/readState", { sessionId }).finally(() => (readStateAnswered = true));
    await eventually(() => relay.count("session.exec") === 1, "readState's command at the host");
    decide!({ decision: "allow" });
    await eventually(() => stack.ask!.stats.pendingInteractions === 0, "the approval taken");
    expect(readStateAnswered).toBe(false);

    relay.release();
    expect(await readState).toMatchObject({ workspace: { sessionId } });
    await waitForTerminal(client, sessionId, turnId);
    const events = client.eventsOf(sessionId);
    expect(payloadsOf(events, "approval.updated")).toEqual([expect.objectContaining({ status: "approved" })]);
    expect(payloadsOf(events, "tool.result")).toEqual([expect.objectContaining({ name: "echo_json", output: '{"a":1}', isError: false })]);
    expectContiguous(events);
  });
});
