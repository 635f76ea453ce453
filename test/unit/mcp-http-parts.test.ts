import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { McpEventStore } from "../../src/transports/mcp-event-store.js";
import { prefersJson } from "../../src/transports/mcp-http.js";

/** The parts of MCP's Streamable HTTP transport that are the gateway's own: the event store a resume replays from, and the choice of JSON answers. */

const note = (n: number): JSONRPCMessage => ({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: n } });

async function replayed(store: McpEventStore, after: string): Promise<{ streamId: string; events: Array<[string, unknown]> }> {
  const events: Array<[string, unknown]> = [];
  const streamId = await store.replayEventsAfter(after, { send: async (id, message) => void events.push([id, (message as { params?: { data?: unknown } }).params?.data]) });
  return { streamId, events };
}

describe("the MCP event store", () => {
  it("replays what followed an event on its own stream, in order, without priming events", async () => {
    const store = new McpEventStore();
    const primed = await store.storeEvent("post-1", {} as JSONRPCMessage);
    await store.storeEvent("_GET_stream", note(1));
    const two = await store.storeEvent("post-1", note(2));
    await store.storeEvent("post-1", {} as JSONRPCMessage);
    await store.storeEvent("post-1", note(3));
    await store.storeEvent("_GET_stream", note(4));
    expect(await replayed(store, primed)).toEqual({ streamId: "post-1", events: [[two, 2], [String(Number(two) + 2), 3]] });
    expect(await replayed(store, String(Number(two) + 2))).toEqual({ streamId: "post-1", events: [] });
  });

  it("keeps only its bound, and refuses a resume from an event it let go", async () => {
    const store = new McpEventStore(3);
    const ids: string[] = [];
    for (let n = 1; n <= 5; n++) ids.push(await store.storeEvent("s", note(n)));
    expect(ids.map((id) => store.has(id))).toEqual([false, false, true, true, true]);
    await expect(replayed(store, ids[1]!)).rejects.toThrow(`no event ${ids[1]} is kept`);
    expect((await replayed(store, ids[2]!)).events.map(([, n]) => n)).toEqual([4, 5]);
    for (const bad of ["", "0", "-1", "1e3", "abc", "6", "99999999999999999999"]) expect(store.has(bad), bad).toBe(false);
  });
});

describe("the choice of JSON answers", () => {
  it("is made when the client ranks application/json above text/event-stream", () => {
    expect(prefersJson("application/json, text/event-stream;q=0.5")).toBe(true);
    expect(prefersJson("text/event-stream; q=0.1, application/json")).toBe(true);
    expect(prefersJson("application/json, text/event-stream")).toBe(false);
    expect(prefersJson("text/event-stream, application/json;q=0.9")).toBe(false);
    expect(prefersJson("application/json")).toBe(true);
    expect(prefersJson(null)).toBe(false);
  });
});
