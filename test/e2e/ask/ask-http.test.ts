import { describe, expect, it } from "vitest";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { ProtocolValidators } from "../../../src/validation/validator.js";
import { openAskSseStream } from "../../../src/transports/ask-sse.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { postRpc, startHttpGateway } from "../../support/http-gateway.js";
import { SseTestClient } from "../../support/sse-client.js";

/**
 * The Ask surface over HTTP: `POST /rpc` (request, batch, notification, content type, size limit,
 * the same validation as the WebSocket) and `GET /rpc/events` (server-sent events: framing,
 * headers, resume with Last-Event-ID, heartbeats, errors, backpressure), against the real gateway
 * with the embedded Tau host.
 */

const cleanups = cleanupsAfterEach();

const schema = ProtocolValidators.shared().get("ask");

const gateway = (options: Parameters<typeof startHttpGateway>[0] = {}) => cleanups.stopAfterTest(startHttpGateway(options));

async function events(url: string, headers: Record<string, string> = {}) {
  const client = await SseTestClient.open(url, { headers });
  cleanups.push(() => client.close());
  return client;
}

async function createSession(baseUrl: string): Promise<string> {
  const created = await postRpc(baseUrl, { jsonrpc: "2.0", id: "c", method: "session/create", params: {} });
  expect(created.status).toBe(200);
  return created.body.result.session.sessionId as string;
}

describe("POST /rpc", () => {
  it("answers a request with its JSON-RPC response, valid against the registry", async () => {
    const gw = await gateway();
    const response = await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 7, method: "ping" });
    expect(response.status).toBe(200);
    expect(response.contentType).toMatch(/^application\/json/);
    expect(response.body).toMatchObject({ jsonrpc: "2.0", id: 7, result: { status: "ok" } });
    expect(schema.message("server", response.body, "ping")).toMatchObject({ ok: true });
  });

  it("answers a batch element by element, leaving out its notifications", async () => {
    const gw = await gateway();
    const response = await postRpc(gw.baseUrl, [
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", method: "ping" },
      { jsonrpc: "2.0", id: 2, method: "session/list", params: {} },
      { jsonrpc: "2.0", id: 3, method: "no/such/method" },
      { jsonrpc: "2.0", id: 4, method: "session/send", params: { content: "hi" } },
    ]);
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body)).toBe(true);
    const byId = new Map((response.body as any[]).map((r) => [r.id, r]));
    expect([...byId.keys()].sort()).toEqual([1, 2, 3, 4]);
    expect(byId.get(1).result.status).toBe("ok");
    expect(byId.get(2).result).toEqual({ sessions: [], nextCursor: null });
    expect(byId.get(3).error.code).toBe(-32601);
    // Same validation as every other transport: the missing field is named.
    expect(byId.get(4).error).toMatchObject({ code: -32602, message: expect.stringContaining("sessionId") });
  });

  it("answers a notification, or a batch of notifications, with 204 and no body", async () => {
    const gw = await gateway();
    const lone = await postRpc(gw.baseUrl, { jsonrpc: "2.0", method: "ping" });
    expect(lone).toMatchObject({ status: 204, body: undefined });
    const batch = await postRpc(gw.baseUrl, [{ jsonrpc: "2.0", method: "ping" }, { method: "ping" }]);
    expect(batch).toMatchObject({ status: 204, body: undefined });
  });

  it("answers bad JSON and an empty body with a JSON-RPC parse error", async () => {
    const gw = await gateway();
    const bad = await postRpc(gw.baseUrl, "{nope");
    expect(bad.status).toBe(200);
    expect(bad.body).toMatchObject({ id: null, error: { code: -32700 } });
    const empty = await postRpc(gw.baseUrl, "");
    expect(empty.body).toMatchObject({ id: null, error: { code: -32700 } });
  });

  it("refuses a body that is not application/json with 415", async () => {
    const gw = await gateway();
    const text = await fetch(`${gw.baseUrl}/rpc`, { method: "POST", headers: { "content-type": "text/plain" }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
    expect(text.status).toBe(415);
    expect(await text.json()).toMatchObject({ error: { code: -32600, message: expect.stringContaining("application/json") } });
    const none = await fetch(`${gw.baseUrl}/rpc`, { method: "POST" });
    expect(none.status).toBe(415);
    // A charset parameter is still JSON.
    const withCharset = await postRpc(gw.baseUrl, { id: 1, method: "ping" }, { "content-type": "application/json; charset=utf-8" });
    expect(withCharset.status).toBe(200);
  });

  it("refuses a body declared in any charset but UTF-8 with 415, and takes every spelling of UTF-8", async () => {
    const gw = await gateway();
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const post = (contentType: string, body: string | Uint8Array<ArrayBuffer> = ping) =>
      fetch(`${gw.baseUrl}/rpc`, { method: "POST", headers: { "content-type": contentType }, body });
    // A real UTF-16 body: read as UTF-8 it would have become a parse error instead.
    const utf16 = await post("application/json; charset=utf-16", new Uint8Array(Buffer.from(`\ufeff${ping}`, "utf16le")));
    expect(utf16.status).toBe(415);
    expect(await utf16.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: 'Invalid Request: POST /rpc takes JSON in UTF-8, not charset "utf-16"' },
    });
    for (const contentType of ['application/json; Charset="UTF-16LE"', "application/json;charset=ISO-8859-1", "application/json; charset=no-such-charset", 'application/json; charset=""']) {
      const response = await post(contentType);
      expect(response.status, contentType).toBe(415);
      expect((await response.json()).error.message, contentType).toMatch(/takes JSON in UTF-8, not charset/);
    }
    for (const contentType of ["application/json; charset=UTF-8", 'application/json; CHARSET="utf-8"', "application/json;charset=utf8", "Application/JSON"]) {
      const response = await post(contentType);
      expect(response.status, contentType).toBe(200);
      expect((await response.json()).result.status, contentType).toBe("ok");
    }
  });

  it("refuses a body over the message size limit with 413", async () => {
    const gw = await gateway({ maxMessageBytes: 1024 });
    const small = await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 1, method: "ping" });
    expect(small.status).toBe(200);
    const large = await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 1, method: "session/send", params: { sessionId: "s", content: "x".repeat(2000) } });
    expect(large.status).toBe(413);
    expect(large.body).toMatchObject({ error: { code: -32600, message: expect.stringContaining("1024") } });
  });
});

describe("GET /rpc/events", () => {
  it("streams a session's events with id = seq, unbuffered headers, and the turn as it happens", async () => {
    const gw = await gateway();
    const sessionId = await createSession(gw.baseUrl);
    const stream = await events(`${gw.baseUrl}/rpc/events?sessionId=${encodeURIComponent(sessionId)}`);
    expect(stream.status).toBe(200);
    expect(stream.headers["content-type"]).toBe("text/event-stream");
    expect(stream.headers["cache-control"]).toBe("no-cache");
    expect(stream.headers["x-accel-buffering"]).toBe("no");

    // The retained backlog first (session.created is seq 1).
    await stream.waitForEvent("session.created");
    const sent = await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 1, method: "session/send", params: { sessionId, content: "hello there" } });
    expect(sent.body.result).toMatchObject({ accepted: true });
    const completed = await stream.waitForEvent("turn.completed");
    expect(completed.payload.response).toBe("You said: hello there");

    const frames = stream.frames.filter((f) => f.event === "session/event");
    const seqs = stream.events().map((e) => e.event.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    for (const [i, frame] of frames.entries()) expect(frame.id).toBe(String(seqs[i]));
    for (const data of stream.events()) {
      expect(data.sessionId).toBe(sessionId);
      expect(schema.check("SessionEventParams", data)).toMatchObject({ ok: true });
    }
    expect(stream.ended).toBe(false);
  });

  it("resumes after Last-Event-ID, which wins over afterSeq; afterSeq alone works too", async () => {
    const gw = await gateway();
    const sessionId = await createSession(gw.baseUrl);
    const first = await events(`${gw.baseUrl}/rpc/events?sessionId=${sessionId}`);
    await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 1, method: "session/send", params: { sessionId, content: "one two three" } });
    await first.waitForEvent("turn.completed");
    const all = first.events().map((e) => e.event);
    expect(all.length).toBeGreaterThan(3);
    first.close();

    // A reconnecting EventSource sends the last id it saw.
    const lastSeen = all[1]!.seq;
    const resumed = await events(`${gw.baseUrl}/rpc/events?sessionId=${sessionId}&afterSeq=0`, { "last-event-id": String(lastSeen) });
    await resumed.waitFor(() => resumed.eventCount() === all.length - lastSeen, "the events after Last-Event-ID");
    expect(resumed.events().map((e) => e.event)).toEqual(all.slice(lastSeen));

    const fromQuery = await events(`${gw.baseUrl}/rpc/events?sessionId=${sessionId}&afterSeq=${all.length - 1}`);
    await fromQuery.waitFor(() => fromQuery.eventCount() === 1, "the last event");
    expect(fromQuery.events()[0]!.event).toEqual(all.at(-1));

    // Nothing missed, nothing repeated: a new turn reaches the resumed stream once.
    await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 2, method: "session/send", params: { sessionId, content: "again" } });
    await resumed.waitFor(() => resumed.events().filter((e) => e.event.type === "turn.completed").length === 2, "the second turn");
    const seqs = resumed.events().map((e) => e.event.seq);
    expect(seqs).toEqual(seqs.map((_, i) => lastSeen + 1 + i));
  });

  it("answers an unknown session with 404 and -32004, and bad parameters with 400", async () => {
    const gw = await gateway();
    const unknown = await events(`${gw.baseUrl}/rpc/events?sessionId=no-such-session`);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(await unknown.body())).toMatchObject({ error: { code: -32004 } });

    const missing = await events(`${gw.baseUrl}/rpc/events`);
    expect(missing.status).toBe(400);
    expect(JSON.parse(await missing.body())).toMatchObject({ error: { code: -32602, message: expect.stringContaining("sessionId") } });

    const sessionId = await createSession(gw.baseUrl);
    const badCursor = await events(`${gw.baseUrl}/rpc/events?sessionId=${sessionId}`, { "last-event-id": "abc" });
    expect(badCursor.status).toBe(400);
    expect(JSON.parse(await badCursor.body())).toMatchObject({ error: { code: -32602, message: expect.stringContaining("Last-Event-ID") } });
  });

  it("sends heartbeat comments on a quiet stream", async () => {
    const gw = await gateway({ sseHeartbeatMs: 20 });
    const sessionId = await createSession(gw.baseUrl);
    const stream = await events(`${gw.baseUrl}/rpc/events?sessionId=${sessionId}`);
    await stream.waitFor(() => stream.comments.filter((c) => c === "keepalive").length >= 2, "two keepalive comments");
  });

  it("lets an interaction be resolved over POST /rpc while the stream reports it", async () => {
    const gw = await gateway();
    const sessionId = await createSession(gw.baseUrl);
    const stream = await events(`${gw.baseUrl}/rpc/events?sessionId=${sessionId}`);
    await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 1, method: "session/send", params: { sessionId, content: '/tool ask_user {"question":"Proceed?"}' } });
    const requested = await stream.waitForEvent("input.requested");
    expect(requested.payload).toMatchObject({ prompt: "Proceed?" });

    const listed = await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 2, method: "interaction/list", params: { sessionId } });
    expect(listed.body.result.interactions.map((i: { id: string }) => i.id)).toEqual([requested.payload.id]);
    const answered = await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 3, method: "interaction/respond", params: { sessionId, interactionId: requested.payload.id, response: "yes, go" } });
    expect(answered.body).toMatchObject({ id: 3, result: expect.anything() });

    await stream.waitForEvent("input.resolved");
    const result = await stream.waitForEvent("tool.result");
    expect(result.payload).toMatchObject({ name: "ask_user", isError: false, output: expect.stringContaining("yes, go") });
    await stream.waitForEvent("turn.completed");

    // First resolution wins: a second answer is -32006.
    const again = await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 4, method: "interaction/respond", params: { sessionId, interactionId: requested.payload.id, response: "no" } });
    expect(again.body.error.code).toBe(-32006);
  });

  it("ends open streams when the gateway closes", async () => {
    const gw = await startHttpGateway();
    const sessionId = await createSession(gw.baseUrl);
    const stream = await events(`${gw.baseUrl}/rpc/events?sessionId=${sessionId}`);
    await stream.waitForEvent("session.created");
    await gw.stop();
    await stream.waitFor(() => stream.ended, "the stream to end");
    expect(stream.comments).toContain("gateway shutting down");
  });
});

describe("HTTP transport with tokens and tenants", () => {
  const tokens = () =>
    TokenRegistry.parse(
      JSON.stringify([
        { id: "a", token: "token-of-tenant-a", tenant: "tenant-a" },
        { id: "b", token: "token-of-tenant-b", tenant: "tenant-b" },
      ]),
      "test tokens",
    );
  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  it("requires a token on POST /rpc and GET /rpc/events, and keeps each tenant to its own sessions", async () => {
    const gw = await gateway({ extra: { tokens: tokens() } });
    expect((await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 1, method: "ping" })).status).toBe(401);
    const created = await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 1, method: "session/create", params: {} }, as("token-of-tenant-a"));
    const sessionId = created.body.result.session.sessionId as string;

    const anonymous = await events(`${gw.baseUrl}/rpc/events?sessionId=${sessionId}`);
    expect(anonymous.status).toBe(401);
    // Another tenant's session does not exist for it, exactly like an unknown one.
    const other = await events(`${gw.baseUrl}/rpc/events?sessionId=${sessionId}`, as("token-of-tenant-b"));
    expect(other.status).toBe(404);
    expect(JSON.parse(await other.body())).toMatchObject({ error: { code: -32004 } });
    const otherSend = await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 2, method: "session/send", params: { sessionId, content: "hi" } }, as("token-of-tenant-b"));
    expect(otherSend.body.error.code).toBe(-32004);

    // The owner streams it; a browser's EventSource passes the token in the query.
    const own = await events(`${gw.baseUrl}/rpc/events?sessionId=${sessionId}&access_token=token-of-tenant-a`);
    expect(own.status).toBe(200);
    await own.waitForEvent("session.created");
  });
});

describe("server-sent events backpressure", () => {
  const event = (seq: number) => ({ sessionId: "s", event: { type: "notice" as const, seq, payload: { severity: "info" as const, title: "t", content: ["x".repeat(1000)] } } });

  it("queues frames for a slow reader and delivers them all, in order, once it reads", async () => {
    const stream = openAskSseStream({ heartbeatMs: 60_000, maxBufferedBytes: 1024 * 1024 });
    cleanups.push(() => stream.close());
    for (let seq = 1; seq <= 200; seq++) stream.peer.notify("session/event", event(seq));
    expect(stream.peer.closed).toBe(false);
    let text = "";
    const ids = () => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    await new Promise<void>((resolve) =>
      stream.body.setEncoding("utf8").on("data", (chunk: string) => {
        text += chunk;
        if (ids().at(-1) === 200) resolve();
      }),
    );
    expect(ids()).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(stream.peer.closed).toBe(false);
  });

  it("replays a backlog larger than the bound to a client that reads it, as the WebSocket does", async () => {
    const gw = await gateway({ extra: { limits: { maxBufferedBytes: 64 * 1024 } } });
    const sessionId = await createSession(gw.baseUrl);
    // One turn streams its long answer in small events: far more than the bound in all. Its end is
    // read from the log, not from a live stream (which a busy machine may rightly drop as too slow).
    await postRpc(gw.baseUrl, { jsonrpc: "2.0", id: 1, method: "session/send", params: { sessionId, content: "x".repeat(20_000) } });
    let all: Array<{ seq: number; type: string }> = [];
    for (let id = 2; !all.some((e) => e.type === "turn.completed"); id++) {
      if (id > 2) await new Promise((resolve) => setTimeout(resolve, 50));
      const backlog = await postRpc(gw.baseUrl, { jsonrpc: "2.0", id, method: "session/events", params: { sessionId } });
      all = backlog.body.result.events as Array<{ seq: number; type: string }>;
    }
    expect(all.map((e) => `id: ${e.seq}\nevent: session/event\ndata: ${JSON.stringify({ sessionId, event: e })}\n\n`).join("").length).toBeGreaterThan(2 * 64 * 1024);

    const replayed = await events(`${gw.baseUrl}/rpc/events?sessionId=${sessionId}`);
    expect(replayed.status).toBe(200);
    await replayed.waitFor(() => replayed.eventCount() === all.length, "the whole backlog");
    expect(replayed.events().map((e) => e.event)).toEqual(all);
    expect(replayed.ended).toBe(false);
  });

  it("disconnects a reader that falls further behind than the bound", async () => {
    let slow = 0;
    const stream = openAskSseStream({ heartbeatMs: 60_000, maxBufferedBytes: 64 * 1024, onSlowConsumer: () => slow++ });
    // Live events arrive tick after tick; the reader never reads.
    for (let seq = 1; seq <= 200 && !stream.peer.closed; seq++) {
      stream.peer.notify("session/event", event(seq));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(stream.peer.closed).toBe(true);
    expect(slow).toBe(1);
    await stream.closed;
    expect(stream.body.destroyed).toBe(true);
  });
});
