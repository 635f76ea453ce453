import { describe, expect, it } from "vitest";
import type { BridgeCore } from "../../src/bridge/bridge-core.js";
import { McpServer } from "../../src/mcp/server.js";
import { runCall } from "../../src/transports/jsonrpc-envelope.js";
import { McpHttpSessions } from "../../src/transports/mcp-http.js";

/**
 * The cap on Streamable HTTP sessions: at the cap, the session idle the longest makes room for a
 * new one, so a host that never ends its sessions cannot lock others out; when every session is at
 * work (a request, a call or a stream open), the new one is refused with 503. The sessions answer
 * initialize and ping only, so the bridge core behind the server is never reached: a stand-in
 * with what the server subscribes to at construction is enough.
 */

const core = { reverse: { add: () => () => undefined }, sessions: { onChange: () => () => undefined }, hostLinks: [] } as unknown as BridgeCore;
const caller = { tenant: "t", gate: () => runCall };
const INITIALIZE = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "unit", version: "1" } } };
const ACCEPT = "application/json, text/event-stream";

function harness(maxSessions: number) {
  const sessions = new McpHttpSessions(new McpServer({ core, serverVersion: "0.0.0", defaultCwd: "/" }), { maxSessions });
  const post = async (body: unknown, sessionId?: string) => {
    const headers = new Headers({ accept: ACCEPT, "content-type": "application/json", ...(sessionId ? { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" } : {}) });
    const { response, session } = await sessions.handle({ method: "POST", url: "http://localhost/mcp", headers, body }, caller);
    return { status: response.status, id: response.headers.get("mcp-session-id"), text: await response.text(), session };
  };
  return { sessions, post, ping: (sessionId: string) => post({ jsonrpc: "2.0", id: 1, method: "ping" }, sessionId) };
}

describe("the cap on MCP sessions over HTTP", () => {
  it("ends the session idle the longest to make room, and refuses when every one is at work", async () => {
    const { sessions, post, ping } = harness(2);
    const first = await post(INITIALIZE);
    const second = await post(INITIALIZE);
    expect([first.status, second.status]).toEqual([200, 200]);
    // The first is used again: the second is now the one idle the longest.
    expect((await ping(first.id!)).status).toBe(200);

    const third = await post(INITIALIZE);
    expect(third.status).toBe(200);
    expect(sessions.size).toBe(2);
    expect((await ping(second.id!)).status).toBe(404);
    expect((await ping(first.id!)).status).toBe(200);

    // Both left are at work (an event stream open on each): a new session must wait.
    const open = [first.session!.streaming(), third.session!.streaming()];
    const refused = await post(INITIALIZE);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.text)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32000, message: expect.stringContaining("limit of 2 MCP sessions, all of them busy") } });
    open[1]!();
    expect((await post(INITIALIZE)).status).toBe(200);
    expect((await ping(first.id!)).status).toBe(200);
    expect((await ping(third.id!)).status).toBe(404);
    await sessions.closeAll();
  });
});
