import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { answerInitialize, startFakeTauPeer, success, type FakeTauPeer, type FakeTauPeerOptions } from "../../support/fake-tau-peer.js";
import { gatewayInFrontOf } from "../../support/gateway.js";
import { errorOf, resultOf, startHostClosedAfterTest, TauTestClient } from "../../support/tau-client.js";

/**
 * WebSocket `/tau` through a real gateway to a real embedded host: a whole session driven by a raw
 * Tau client, invalid requests answered by the gateway and never reaching the host, and both sides'
 * closes. A scripted peer stands in for a host only to send what the real one never does.
 */

const cleanups = cleanupsAfterEach();

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "gateway-tau-")));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const host = () => startHostClosedAfterTest(cleanups);

/** A gateway in front of `upstreamUrl`; returns its `/tau` URL and the app. */
async function gateway(upstreamUrl: string): Promise<{ app: FastifyInstance; tauUrl: string }> {
  const { app } = gatewayInFrontOf(upstreamUrl, cleanups);
  const address = await app.listen({ port: 0, host: "127.0.0.1" });
  return { app, tauUrl: `${address.replace("http://", "ws://")}/tau` };
}

async function connect(url: string): Promise<TauTestClient> {
  const client = await TauTestClient.connect(url);
  cleanups.push(() => client.close());
  return client;
}

/** A raw socket that records everything, for cases TauTestClient cannot express (early sends, closes before ready). */
function rawSocket(url: string): { socket: WebSocket; messages: any[]; closed: Promise<{ code: number; reason: string }> } {
  const socket = new WebSocket(url);
  const messages: any[] = [];
  socket.on("message", (data) => messages.push(JSON.parse(data.toString())));
  socket.on("error", () => undefined);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  cleanups.push(() => socket.terminate());
  return { socket, messages, closed };
}

const waitUntil = async (condition: () => boolean, what: string) => {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
};

describe("/tau passthrough to the embedded host", () => {
  it("relays a whole session: ready, initialize, create, observe, a streamed turn and its response", async () => {
    const h = await host();
    const { tauUrl } = await gateway(h.url);
    const direct = await connect(h.url);
    const client = await connect(tauUrl);
    expect(client.ready).toEqual(direct.ready);

    const init = resultOf(await client.initialize(), "initialize");
    expect(init).toMatchObject({ protocolVersion: 18, alreadyInitialized: false });
    const sessionId = await client.createSession(tempDir());
    const observed = await client.call("session.observe", { sessionId });
    expect(observed.snapshot.sessionId).toBe(sessionId);

    const since = client.mark();
    const result = await client.call("session.submit", { sessionId, text: "through the gateway", historyEntryId: "t1" });
    expect(result).toEqual({ userHistoryEntryId: "t1", turn: { status: "completed", stopReason: "stop" } });
    const streamed = client
      .changes(sessionId, since)
      .filter((c) => c.type === "message.content.append")
      .map((c) => (c.type === "message.content.append" ? c.text ?? "" : ""))
      .join("");
    expect(streamed).toBe("You said: through the gateway");
    // The host itself holds the session and the settled turn.
    const snapshot = await direct.snapshot(sessionId);
    expect(snapshot.turns["t1"]).toMatchObject({ state: "settled", outcome: { status: "completed" } });
    client.assertAllValid();
  });

  it("answers invalid requests itself, exactly as the host would, and never forwards them", async () => {
    const h = await host();
    const { app, tauUrl } = await gateway(h.url);
    const direct = await connect(h.url);
    const client = await connect(tauUrl);
    const cwd = tempDir();

    const cases: Array<[string, string]> = [
      ["numeric id", JSON.stringify({ version: 18, type: "request", id: 7, method: "session.list", params: {} })],
      ["wrong version", JSON.stringify({ version: 17, type: "request", id: "v17", method: "session.list", params: {} })],
      ["unknown method", JSON.stringify({ version: 18, type: "request", id: "m1", method: "session.fly", params: {} })],
      ["missing params", JSON.stringify({ version: 18, type: "request", id: "p0", method: "session.list" })],
      ["not JSON", "{nope"],
      ["blank", "  \n"],
      // Would create a session if it got through: the cwd is fine, the attributes are not.
      ["bad params", JSON.stringify({ version: 18, type: "request", id: "bad-create", method: "session.create", params: { executionEnvironment: { kind: "local", cwd }, attributes: { "": "x" } } })],
    ];
    const expected: Array<{ code: string; id: string | null }> = [
      { code: "invalid_request", id: null },
      { code: "invalid_request", id: "v17" },
      { code: "method_not_found", id: "m1" },
      { code: "invalid_request", id: "p0" },
      { code: "parse_error", id: null },
      { code: "invalid_request", id: null },
      { code: "invalid_params", id: "bad-create" },
    ];
    const start = client.mark();
    for (const [index, [what, text]] of cases.entries()) {
      const since = client.mark();
      client.sendRaw(text);
      const viaGateway = await client.waitFor((m) => m.type === "response", `response to ${what}`, { since });
      const directSince = direct.mark();
      direct.sendRaw(text);
      const fromHost = await direct.waitFor((m) => m.type === "response", `host response to ${what}`, { since: directSince });
      expect(viaGateway, what).toEqual(fromHost);
      expect({ code: viaGateway.error.code, id: viaGateway.id }, what).toEqual(expected[index]);
    }
    expect(app.tauPassthrough.invalidClientRequests).toBe(cases.length);

    // Had the gateway forwarded the session.create, the host would hold a session now.
    const hostSessions = (await direct.call("session.list", {})).sessions as Array<{ sessionId: string }>;
    expect(hostSessions).toEqual([]);
    // The connection stays usable after invalid input, and this answer is a barrier: the host
    // answers in order, so a forwarded invalid request's own answer would have arrived by now as
    // a second response. Exactly one response per request came back.
    expect((await client.call("session.list", {})).sessions).toEqual([]);
    expect(client.messagesOf("response", undefined, start)).toHaveLength(cases.length + 1);
  });

  it("queues requests sent before the upstream is ready; ready comes first, then every answer", async () => {
    const h = await host();
    const { tauUrl } = await gateway(h.url);
    const { socket, messages } = rawSocket(tauUrl);
    await new Promise((resolve) => socket.once("open", resolve));
    socket.send(JSON.stringify({ version: 18, type: "request", id: "early-1", method: "initialize", params: { client: { name: "early", version: "1" } } }));
    socket.send(JSON.stringify({ version: 18, type: "request", id: "early-2", method: "session.list", params: {} }));
    socket.send(JSON.stringify({ version: 18, type: "request", id: 3, method: "session.list", params: {} }));
    await waitUntil(() => messages.length >= 4, "ready and three responses");
    expect(messages[0].type).toBe("ready");
    const responses = messages.slice(1);
    expect(responses.map((m) => m.id).sort((a, b) => String(a).localeCompare(String(b)))).toEqual(["early-1", "early-2", null].sort((a, b) => String(a).localeCompare(String(b))));
    expect(responses.find((m) => m.id === "early-2")).toMatchObject({ ok: true, result: { sessions: [] } });
    expect(responses.find((m) => m.id === null)).toMatchObject({ ok: false, error: { code: "invalid_request" } });
  });

  it("refuses a request whose id is still open with invalid_request, never forwards it, and answers the first as usual", async () => {
    const h = await host();
    const { app, tauUrl } = await gateway(h.url);
    const client = await connect(tauUrl);
    const dir = tempDir();
    const sessionId = await client.createSession(dir);
    const request = (id: string, method: string, params: object) => JSON.stringify({ version: 18, type: "request", id, method, params });
    const answersToDup = (since: number) => client.messagesOf("response", undefined, since).filter((m) => m.id === "dup");

    const start = client.mark();
    // Runs until the test creates the release file: its request stays open meanwhile.
    const release = join(dir, "release");
    client.sendRaw(request("dup", "session.exec", { sessionId, execId: "e1", command: `while [ ! -e '${release}' ]; do sleep 0.05; done; echo released` }));
    client.sendRaw(request("dup", "session.list", {}));
    const refusal = await client.waitFor((m) => m.type === "response" && m.id === "dup", "the answer to the duplicate", { since: start });
    expect(refusal).toMatchObject({ ok: false, error: { code: "invalid_request", message: expect.stringContaining('"dup"') } });

    writeFileSync(release, "");
    const exec = await client.waitFor((m) => m.type === "response" && m.id === "dup" && m.ok, "the exec's response", { since: start });
    expect(exec.result).toMatchObject({ exitCode: 0, output: expect.stringContaining("released") });
    // The host answers a session.list at once: had the duplicate been forwarded, its answer would
    // have come before the exec's. Exactly the refusal and the exec's own answer came back.
    expect(answersToDup(start)).toHaveLength(2);

    // Answered, the id is free again.
    const again = client.mark();
    client.sendRaw(request("dup", "session.list", {}));
    const list = await client.waitFor((m) => m.type === "response" && m.id === "dup", "the answer to the reused id", { since: again });
    expect(list).toMatchObject({ ok: true, result: { sessions: [{ sessionId }] } });
    expect(app.tauPassthrough.invalidUpstreamMessages).toBe(0);
    client.assertAllValid();
  });

  it("closes the client with 1003 on a binary frame", async () => {
    const h = await host();
    const { tauUrl } = await gateway(h.url);
    const client = await connect(tauUrl);
    client.socket.send(Buffer.from('{"version":18}'), { binary: true });
    const closed = await client.closed();
    expect(closed.code).toBe(1003);
    expect(closed.reason).toMatch(/text/);
  });

  it("closes the client with a meaningful code when the host goes away", async () => {
    const h = await host();
    const { tauUrl } = await gateway(h.url);
    const client = await connect(tauUrl);
    resultOf(await client.initialize(), "initialize");
    await h.close();
    const closed = await client.closed();
    expect([1001, 1011, 1012, 1013]).toContain(closed.code);
    expect(closed.reason).toMatch(/upstream/i);
  });

  it("closes the client with 1013 and a reason when the upstream is unreachable", async () => {
    const h = await host();
    const url = h.url;
    await h.close();
    const { tauUrl } = await gateway(url);
    const { closed, messages } = rawSocket(tauUrl);
    const info = await closed;
    expect(info.code).toBe(1013);
    expect(info.reason).toMatch(/unavailable/);
    expect(messages).toEqual([]);
  });
});

describe("/tau passthrough to a scripted peer", () => {
  async function peer(onRequest: FakeTauPeerOptions["onRequest"]): Promise<FakeTauPeer> {
    const running = await startFakeTauPeer({ onRequest });
    cleanups.push(() => running.close());
    return running;
  }

  it("forwards the client's original text, and relays only valid upstream messages", async () => {
    const p = await peer((request, socket) => {
      if (answerInitialize(request, socket)) return;
      socket.send(JSON.stringify({ version: 18, type: "session.delta", sessionId: "s" })); // invalid: dropped
      socket.send(JSON.stringify({ version: 18, type: "session.pendingUserMessages", sessionId: "s", state: { revision: 1, messages: [] } }));
      if (request.id === "bad-result") socket.send(success(request.id, { sessions: "not a list" }));
      else socket.send(success(request.id, { sessions: [] }));
    });
    const { app, tauUrl } = await gateway(p.url);
    const { socket, messages } = rawSocket(tauUrl);
    await waitUntil(() => messages.length === 1, "ready");
    // Odd but valid spacing and an unknown top-level field: forwarded byte for byte.
    const original = '{ "version":18,"type":"request","id":"list-1",  "method":"session.list","params":{},"extra":true}';
    socket.send(original);
    await waitUntil(() => messages.some((m) => m.id === "list-1"), "response to list-1");
    expect(p.received).toContain(original);
    expect(messages.map((m) => m.type)).toEqual(["ready", "session.pendingUserMessages", "response"]);

    // A response that fails its method's result schema is not relayed; the client gets an error instead of waiting forever.
    socket.send(JSON.stringify({ version: 18, type: "request", id: "bad-result", method: "session.list", params: {} }));
    await waitUntil(() => messages.some((m) => m.id === "bad-result"), "answer to bad-result");
    expect(messages.find((m) => m.id === "bad-result")).toMatchObject({ ok: false, error: { code: "internal_error" } });
    expect(app.tauPassthrough.invalidUpstreamMessages).toBe(3);
  });

  it("relays no response that answers none of the client's open requests: one response per request, none unasked", async () => {
    const p = await peer((request, socket) => {
      // A response to an id the client never used, the real answer, the same answer again, and an
      // id-null error (valid Tau: the host could not read a request's id).
      socket.send(success("never-sent", { sessions: [] }));
      socket.send(success(request.id, { sessions: [] }));
      socket.send(success(request.id, { sessions: [] }));
      socket.send(JSON.stringify({ version: 18, type: "response", id: null, ok: false, error: { code: "parse_error", message: "failed to parse JSON request line" } }));
    });
    const { app, tauUrl } = await gateway(p.url);
    const { socket, messages } = rawSocket(tauUrl);
    await waitUntil(() => messages.length === 1, "ready");
    socket.send(JSON.stringify({ version: 18, type: "request", id: "list-1", method: "session.list", params: {} }));
    await waitUntil(() => messages.some((m) => m.id === null), "the id-null error");
    expect(messages.filter((m) => m.type === "response").map((m) => m.id)).toEqual(["list-1", null]);
    expect(app.tauPassthrough.invalidUpstreamMessages).toBe(2);
  });

  it("closes the upstream with 1000 when the client closes", async () => {
    const p = await peer(() => undefined);
    const { tauUrl } = await gateway(p.url);
    const client = await connect(tauUrl);
    const upstreamClosed = p.nextClose();
    await client.close();
    expect((await upstreamClosed).code).toBe(1000);
  });

  it("closes the client with 1011 when the upstream speaks another protocol version", async () => {
    const v17 = await startFakeTauPeer({ ready: { version: 17, type: "ready", methods: ["initialize"] } });
    cleanups.push(() => v17.close());
    const { tauUrl } = await gateway(v17.url);
    const { closed, messages } = rawSocket(tauUrl);
    const info = await closed;
    expect(info.code).toBe(1011);
    expect(info.reason).toMatch(/17/);
    expect(messages).toEqual([]);
  });

  it("an error response relayed from the upstream keeps Tau's code", async () => {
    const p = await peer((request, socket) => {
      socket.send(JSON.stringify({ version: 18, type: "response", id: request.id, ok: false, error: { code: "busy", message: "a mutating session request is in progress" } }));
    });
    const { tauUrl } = await gateway(p.url);
    const client = await connect(tauUrl);
    expect(errorOf(await client.request("session.list", {})).code).toBe("busy");
  });
});
