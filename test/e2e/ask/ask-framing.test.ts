import { describe, expect, it } from "vitest";
import type { AskTestClient } from "../../support/ask-client.js";
import { expectContiguous, openSession, runTurn } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startTestGateway, type TestGatewayOptions } from "../../support/gateway.js";

/**
 * JSON-RPC framing on `/rpc`: requests with and without `"jsonrpc"`, the `omit` setting for
 * app-server peers, and batches (element by element, none for notifications, bounded).
 */

const cleanups = cleanupsAfterEach();

const gateway = (options: TestGatewayOptions = {}) => cleanups.stopAfterTest(startTestGateway(options));

type SocketClient = AskTestClient & { socket: import("ws").WebSocket };

/** Every WebSocket message the client receives, parsed but not split (a batch answer stays an array). */
function frames(client: SocketClient): unknown[] {
  const seen: unknown[] = [];
  client.socket.on("message", (data) => seen.push(JSON.parse(data.toString())));
  return seen;
}

/** Sends raw text and resolves with the next WebSocket message received, whole. */
async function raw(client: SocketClient, text: string): Promise<any> {
  const seen = frames(client);
  const before = client.received.length;
  client.socket.send(text);
  await client.waitFor(() => client.received.length > before, `an answer to ${text.slice(0, 80)}`);
  return seen[0];
}

describe('"jsonrpc" member', () => {
  it('requests with and without "jsonrpc" are answered alike; answers and notifications carry it by default', async () => {
    const gw = await gateway();
    const withIt = await gw.client();
    const without = await gw.client({ jsonrpc: false });
    const sessionId = await openSession(without);
    await withIt.request("session/subscribe", { sessionId });
    await runTurn(without, sessionId, "no member");
    await withIt.waitFor(() => withIt.eventsOf(sessionId).some((e) => e.type === "turn.completed"), "the turn end");
    for (const client of [withIt, without]) {
      expect(client.received.length).toBeGreaterThan(3);
      expect(client.received.every((m) => (m as { jsonrpc?: string }).jsonrpc === "2.0")).toBe(true);
      expectContiguous(client.eventsOf(sessionId));
      expect(client.invalid).toEqual([]);
    }
    expect(await raw(without, '{"id":"bare","method":"ping"}')).toMatchObject({ jsonrpc: "2.0", id: "bare", result: { status: "ok" } });
  });

  it("jsonrpcMember omit: responses, errors and notifications have no jsonrpc member", async () => {
    const gw = await gateway({ jsonrpcMember: "omit" });
    const client = await gw.client({ jsonrpc: false });
    const sessionId = await openSession(client);
    await runTurn(client, sessionId, "quiet");
    await client.request("session/teleport").catch(() => undefined);
    expect(await raw(client, "{oops")).toEqual({ id: null, error: expect.objectContaining({ code: -32700 }) });
    expect(client.received.length).toBeGreaterThan(5);
    for (const m of client.received) expect(m).not.toHaveProperty("jsonrpc");
    expect(client.received.some((m) => (m as { method?: string }).method === "session/event")).toBe(true);
    expect(client.received.some((m) => "error" in (m as object))).toBe(true);
    expect(client.invalid).toEqual([]);
  });
});

describe("batches", () => {
  it("a mixed batch gets one answer per request, in order, and none for its notifications", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    const answer = await raw(
      client,
      JSON.stringify([
        { jsonrpc: "2.0", id: 1, method: "ping" },
        { jsonrpc: "2.0", method: "ping" },
        { id: 2, method: "session/events", params: { sessionId } },
        { jsonrpc: "2.0", id: 3, method: "session/nothing" },
        42,
        { jsonrpc: "2.0", id: 4, method: "session/send", params: { sessionId, content: 42 } },
        { jsonrpc: "2.0", method: "session/teleport" },
        { jsonrpc: "2.0", id: 5, method: "session/events", params: { sessionId: "missing" } },
      ]),
    );
    expect(Array.isArray(answer)).toBe(true);
    expect(answer).toEqual([
      { jsonrpc: "2.0", id: 1, result: expect.objectContaining({ status: "ok" }) },
      { jsonrpc: "2.0", id: 2, result: { sessionId, events: [expect.objectContaining({ type: "session.created" })], hasMore: null } },
      { jsonrpc: "2.0", id: 3, error: expect.objectContaining({ code: -32601 }) },
      { jsonrpc: "2.0", id: null, error: expect.objectContaining({ code: -32600 }) },
      { jsonrpc: "2.0", id: 4, error: expect.objectContaining({ code: -32602, message: expect.stringContaining("content") }) },
      { jsonrpc: "2.0", id: 5, error: expect.objectContaining({ code: -32004 }) },
    ]);
    expect(client.invalid).toEqual([]);
  });

  it("a batch of notifications only gets nothing back; an empty batch and an oversized one are refused whole", async () => {
    const gw = await gateway({ maxBatch: 3 });
    const client = await gw.client();
    client.socket.send(JSON.stringify([{ jsonrpc: "2.0", method: "ping" }, { method: "ping" }]));
    expect(await raw(client, "[]")).toEqual({ jsonrpc: "2.0", id: null, error: expect.objectContaining({ code: -32600, message: expect.stringContaining("empty") }) });
    const tooMany = Array.from({ length: 4 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "ping" }));
    expect(await raw(client, JSON.stringify(tooMany))).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: expect.objectContaining({ code: -32600, message: expect.stringContaining("limit of 3") }),
    });
    const fits = await raw(client, JSON.stringify(tooMany.slice(0, 3)));
    expect(fits.map((r: { id: number }) => r.id)).toEqual([0, 1, 2]);
    // The notifications-only batch sent first produced nothing: two refusals and three answers.
    expect(client.received).toHaveLength(5);
    expect(client.invalid).toEqual([]);
  });
});
