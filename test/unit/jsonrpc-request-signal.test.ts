import { describe, expect, it } from "vitest";
import { JsonRpcConnection, type JsonRpcConnectionOptions } from "../../src/transports/jsonrpc-connection.js";
import { MCP_OUTBOUND } from "../../src/transports/mcp-jsonrpc.js";

/**
 * Every request a connection runs carries an AbortSignal of its own: it aborts when the connection
 * closes, or when the client cancels that request with the dialect's notification, and no other.
 */

const codes = { parse_error: -32700, invalid_request: -32600, method_not_found: -32601, invalid_params: -32602, internal_error: -32603 };

/** A connection whose `wait` method resolves once its signal aborts, with the abort's reason. */
function connection(options: Partial<JsonRpcConnectionOptions> = {}) {
  const written: Array<Record<string, unknown>> = [];
  const signals = new Map<unknown, AbortSignal>();
  const notified: string[] = [];
  const rpc = new JsonRpcConnection((text) => void written.push(JSON.parse(String(text)) as Record<string, unknown>), {
    jsonrpcMember: "include",
    outbound: MCP_OUTBOUND,
    methods: ["wait", "quick"],
    call: async (method, params, hooks) => {
      signals.set(params?.tag, hooks.signal);
      if (method === "quick") return { aborted: hooks.signal.aborted };
      if (hooks.signal.aborted) return { reason: String(hooks.signal.reason) };
      return new Promise((resolve) => hooks.signal.addEventListener("abort", () => resolve({ reason: String((hooks.signal.reason as Error).message) }), { once: true }));
    },
    onNotification: (method) => void notified.push(method),
    errorOf: () => ({ code: -32603, message: "failed" }),
    codes,
    batches: false,
    answerUnidentifiable: true,
    firstRequestId: 0,
    ...options,
  });
  const request = (id: number | string, method: string, tag: string) => rpc.receive(JSON.stringify({ jsonrpc: "2.0", id, method, params: { tag } }));
  return { rpc, written, signals, notified, request };
}

describe("a request's abort signal", () => {
  it("aborts when the client cancels that request, and only that one; the answer is still written", async () => {
    const { rpc, written, signals, notified, request } = connection({ cancelMethod: "notifications/cancelled" });
    const first = request(1, "wait", "first");
    void request("two", "wait", "second");
    await rpc.receive(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, reason: "no longer needed" } }));
    await first;
    expect(signals.get("first")?.aborted).toBe(true);
    expect(signals.get("second")?.aborted).toBe(false);
    expect(written).toEqual([{ jsonrpc: "2.0", id: 1, result: { reason: "cancelled by the client" } }]);
    // The dialect still hears the notification (MCP drops the cancelled request's answer itself).
    expect(notified).toEqual(["notifications/cancelled"]);
    // A cancel naming an id of no running request, or another method's params, aborts nothing.
    await rpc.receive(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }));
    await rpc.receive(JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { requestId: "two" } }));
    expect(signals.get("second")?.aborted).toBe(false);
    await rpc.receive(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "two" } }));
    expect(signals.get("second")?.aborted).toBe(true);
  });

  it("aborts every request still running when the connection closes, and leaves those answered alone", async () => {
    const { rpc, signals, request } = connection({ cancelMethod: "$/cancel_request" });
    await request(1, "quick", "answered");
    const running = request(2, "wait", "running");
    expect(signals.get("running")?.aborted).toBe(false);
    rpc.close();
    await running;
    expect(signals.get("running")?.aborted).toBe(true);
    expect((signals.get("running")?.reason as Error).message).toBe("connection closed");
    expect(signals.get("answered")?.aborted).toBe(false);
  });

  it("is not aborted by a cancel notification where the dialect has none", async () => {
    const { rpc, signals, request } = connection();
    void request(1, "wait", "running");
    await rpc.receive(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }));
    expect(signals.get("running")?.aborted).toBe(false);
    rpc.close();
  });
});
