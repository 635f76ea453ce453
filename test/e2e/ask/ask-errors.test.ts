import { describe, expect, it } from "vitest";
import { rpcError, type AskTestClient } from "../../support/ask-client.js";
import { eventually, openSession } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startTestGateway } from "../../support/gateway.js";

/**
 * Every error the Ask surface answers with, each provoked for real over `/rpc` (DESIGN §4.5):
 * envelope errors, unknown methods, params naming the field, unknown sessions, interactions and
 * plans that are not pending, and an upstream that is gone. Busy (-32010) is provoked in
 * ask-turns.test.ts, where a turn is being interrupted.
 */

const cleanups = cleanupsAfterEach();

const gateway = () => cleanups.stopAfterTest(startTestGateway());

/** Sends raw text and resolves with the next message received. */
async function raw(client: AskTestClient & { socket: import("ws").WebSocket }, text: string): Promise<any> {
  const before = client.received.length;
  client.socket.send(text);
  await client.waitFor(() => client.received.length > before, `an answer to ${text}`);
  return client.received[before];
}

describe("envelope errors", () => {
  it("-32700 for text that is not JSON, -32600 for a non-object, a missing method or a wrong jsonrpc, -32601 for an unknown method", async () => {
    const gw = await gateway();
    const client = await gw.client();
    expect(await raw(client, "{not json")).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.stringContaining("Parse error") } });
    expect(await raw(client, "42")).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringContaining("object") } });
    expect(await raw(client, '"ping"')).toMatchObject({ id: null, error: { code: -32600 } });
    expect(await raw(client, '{"jsonrpc":"2.0","id":7}')).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32600, message: expect.stringContaining("Method not specified") } });
    expect(await raw(client, '{"jsonrpc":"1.0","id":8,"method":"ping"}')).toEqual({ jsonrpc: "2.0", id: 8, error: { code: -32600, message: expect.stringContaining("jsonrpc") } });
    expect(await raw(client, '{"jsonrpc":"2.0","id":9,"method":7}')).toMatchObject({ id: 9, error: { code: -32600 } });
    expect(await raw(client, '{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}')).toMatchObject({ id: null, error: { code: -32600 } });

    const unknown = await rpcError(client.request("session/teleport", {}));
    expect(unknown.code).toBe(-32601);
    expect(unknown.message).toContain("session/teleport");
    // The connection is still fine after all that.
    expect(await client.request("ping")).toMatchObject({ status: "ok", protocolVersion: "1.0" });
    expect(client.invalid).toEqual([]);
  });

  it("-32601 names the method also when it is the name of an Object property (constructor, toString, __proto__)", async () => {
    const gw = await gateway();
    const client = await gw.client();
    for (const method of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      const unknown = await rpcError(client.request(method, {}));
      expect(unknown.code, method).toBe(-32601);
      expect(unknown.message, method).toContain(`Method not found: ${method}`);
    }
    expect(client.invalid).toEqual([]);
  });

  it("notifications never get an answer, not even an error", async () => {
    const gw = await gateway();
    const client = await gw.client();
    client.notify("session/teleport", {});
    client.notify("session/send", { sessionId: "nope", content: 42 });
    client.notify("ping");
    client.socket.send('{"jsonrpc":"2.0","method":"ping","params":[1]}');
    // A request after them is answered first and alone.
    expect(await client.request("ping")).toMatchObject({ status: "ok" });
    expect(client.received).toHaveLength(1);
    expect(client.invalid).toEqual([]);
  });
});

describe("-32602: params that do not fit name the field", () => {
  it("content 42, deliveryKind teleport, an unknown session/create tool, a missing field, params that are not an object", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);

    const content = await rpcError(client.request("session/send", { sessionId, content: 42 }));
    expect(content.code).toBe(-32602);
    expect(content.message).toContain("content");

    const kind = await rpcError(client.request("session/subscribe", { sessionId, deliveryKind: "teleport" }));
    expect(kind.code).toBe(-32602);
    expect(kind.message).toContain("deliveryKind");

    // The Ask host's words for both.
    const tool = await rpcError(client.request("session/create", { tools: ["bash", "teleporter"] }));
    expect(tool.code).toBe(-32602);
    expect(tool.message).toBe("-32602: Unknown tool: teleporter");
    expect(tool.data).toMatchObject({ field: "tools", tool: "teleporter" });

    const missing = await rpcError(client.request("session/send", { sessionId }));
    expect(missing.code).toBe(-32602);
    expect(missing.message).toBe('-32602: method session/send missing required field "content"');

    const extra = await rpcError(client.request("session/events", { sessionId, afterSeq: -2 }));
    expect(extra.code).toBe(-32602);
    expect(extra.message).toContain("afterSeq");

    expect(await raw(client, '{"jsonrpc":"2.0","id":"p","method":"ping","params":[1,2]}')).toMatchObject({ id: "p", error: { code: -32602 } });
    // Nothing of that reached the session.
    expect((await client.request("session/events", { sessionId })).events.map((e: { type: string }) => e.type)).toEqual(["session.created"]);
    expect(client.invalid).toEqual([]);
  });
});

describe("-32004, -32006, -32007", () => {
  it("unknown sessions, interactions and plans", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const unknown = "00000000-0000-4000-8000-000000000000";
    for (const [method, params] of [
      ["session/send", { sessionId: unknown, content: "hi" }],
      ["session/subscribe", { sessionId: unknown }],
      ["session/events", { sessionId: unknown }],
      ["session/resume", { sessionId: unknown }],
      ["session/abort", { sessionId: unknown }],
      ["session/close", { sessionId: unknown }],
      ["interaction/list", { sessionId: unknown }],
      ["workspace/readState", { sessionId: unknown }],
    ] as const) {
      const error = await rpcError(client.request(method, params));
      expect(error.code, method).toBe(-32004);
      expect(error.message, method).toBe(`-32004: Session ${unknown} not found`);
    }

    const sessionId = await openSession(client);
    for (const [method, params] of [
      ["interaction/approve", { sessionId, interactionId: "act_1" }],
      ["interaction/reject", { sessionId, interactionId: "act_99" }],
      ["interaction/respond", { sessionId, interactionId: "input_1", response: "x" }],
      ["interaction/approve", { sessionId, interactionId: "not-an-id" }],
    ] as const) {
      const error = await rpcError(client.request(method, params));
      expect(error.code, `${method} ${params.interactionId}`).toBe(-32006);
      expect(error.message).toBe(`-32006: Interaction ${params.interactionId} not found`);
    }
    for (const [method, params] of [
      ["plan/approve", { sessionId }],
      ["plan/reject", { sessionId, feedback: "no" }],
    ] as const) {
      const error = await rpcError(client.request(method, params));
      expect(error.code, method).toBe(-32007);
      expect(error.message, method).toBe(`-32007: No pending plan for session ${sessionId}`);
    }
    expect(client.invalid).toEqual([]);
  });
});

describe("-32012: the upstream Tau host is gone", () => {
  it("requests that need the host fail with -32012; local ones and the logs still answer", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    await gw.stopHost();
    await eventually(() => !gw.stack.upstream!.connected, "the bridge connection to drop");

    for (const [method, params] of [
      ["session/create", {}],
      ["session/send", { sessionId, content: "hello?" }],
      ["session/abort", { sessionId }],
      ["session/list", {}],
    ] as const) {
      const error = await rpcError(client.request(method, params));
      expect(error.code, method).toBe(-32012);
      expect(error.message, method).toContain("unavailable");
    }
    expect(await client.request("ping")).toMatchObject({ status: "ok" });
    expect((await client.request("session/events", { sessionId })).events[0]).toMatchObject({ type: "session.created" });
    expect(client.invalid).toEqual([]);
  });
});
