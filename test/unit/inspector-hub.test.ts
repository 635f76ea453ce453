import { describe, expect, it } from "vitest";
import { InspectorHub, type InspectorEvent } from "../../src/gateway/inspector/inspector-hub.js";

/** The inspector's memory: bounded per connection, in closed connections and in events, and resumable. */

const limits = { maxFrames: 3, maxBytes: 10_000, maxClosedConnections: 1, maxEvents: 5, maxSnapshotFrames: 100, maxTotalBytes: 64 * 1024 * 1024 };
const request = (id: number, method = "session/list") => JSON.stringify({ jsonrpc: "2.0", id, method, params: {} });

describe("the inspector hub", () => {
  it("keeps the newest frames of a connection, counts the dropped ones and pairs answers across the cut", () => {
    const hub = new InspectorHub(limits);
    const connection = hub.connection("ask", "websocket /rpc");
    for (let id = 1; id <= 4; id++) connection.client(request(id));
    connection.server(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { sessions: [], nextCursor: null } }));
    const trace = hub.trace("ask-1")!;
    expect(trace.frames().map((f) => f.index)).toEqual([3, 4, 5]);
    expect(trace.info()).toMatchObject({ frames: 5, dropped: 2, inflight: { count: 3 } });
    expect(trace.frames()[2]).toMatchObject({ kind: "response", answers: { index: 1 }, verdict: { status: "valid" } });
  });

  it("bounds a connection's bytes, keeping at least its newest frame", () => {
    const hub = new InspectorHub({ ...limits, maxFrames: 100, maxBytes: 100 });
    const connection = hub.connection("ask", "websocket /rpc");
    connection.client(request(1));
    connection.client(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "session/list", params: { cursor: "x".repeat(200) } }));
    expect(hub.trace("ask-1")!.frames().map((f) => f.index)).toEqual([2]);
  });

  it("bounds the bytes kept over every connection: the oldest frames go, whichever connection they are of", () => {
    const frame = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "session/list", params: { pad: "x".repeat(60) } });
    const size = frame(1).length;
    const hub = new InspectorHub({ ...limits, maxFrames: 100, maxBytes: 100 * size, maxEvents: 100, maxTotalBytes: 4 * size });
    const a = hub.connection("ask", "websocket /rpc");
    const b = hub.connection("ask", "websocket /rpc");
    a.client(frame(1));
    b.client(frame(2));
    a.client(frame(3));
    b.client(frame(4));
    b.client(frame(5));
    a.close();
    a.client(frame(6)); // closed: not kept
    b.client(frame(7));
    // Four frames fit: 5 pushed out 1 (of the other connection), 7 pushed out 2.
    expect(hub.trace("ask-1")!.frames().map((f) => JSON.parse(f.message!).id)).toEqual([3]);
    expect(hub.trace("ask-2")!.frames().map((f) => JSON.parse(f.message!).id)).toEqual([4, 5, 7]);
    expect(hub.trace("ask-1")!.info().dropped).toBe(1);
    expect(hub.bytes.frames).toBeLessThanOrEqual(4 * size);
    // The events a feed resumes from are bounded by the same bytes.
    expect(hub.bytes.events).toBeLessThanOrEqual(4 * size);
  });

  it("forgets the oldest closed connections first and never a live one", () => {
    const hub = new InspectorHub(limits);
    const live = hub.connection("codex", "websocket /");
    const a = hub.connection("acp", "websocket /acp");
    const b = hub.connection("acp", "websocket /acp");
    a.close();
    b.close();
    expect(hub.snapshot().connections.map((c) => c.id)).toEqual(["codex-1", "acp-3"]);
    live.client(request(1, "initialize"));
    expect(hub.trace("codex-1")).toBeDefined();
  });

  it("replays what a feed missed while it is kept, and says when it is not", () => {
    const hub = new InspectorHub(limits);
    const seen: InspectorEvent[] = [];
    const stop = hub.subscribe((event) => seen.push(event));
    const connection = hub.connection("ask", "websocket /rpc");
    connection.client(request(1));
    stop();
    connection.client(request(2));
    expect(hub.since(seen.at(-1)!.seq)!.map((e) => e.seq)).toEqual([3]);
    expect(hub.since(3)).toEqual([]);
    for (let id = 3; id <= 8; id++) connection.client(request(id));
    expect(hub.since(1)).toBeUndefined();
    expect(hub.since(99)).toBeUndefined();
    expect(hub.since(-1)).toBeUndefined();
  });

  it("checks a connection's frames in order, as validate checks its recording", () => {
    const hub = new InspectorHub(limits);
    const connection = hub.connection("codex", "websocket /");
    connection.server(JSON.stringify({ id: 9, result: {} }));
    connection.client("not json");
    connection.client(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "initialize", params: { clientInfo: { name: "tui", version: "0.1" } } }]));
    const frames = hub.trace("codex-1")!.frames();
    expect(frames.map((f) => f.verdict.status)).toEqual(["unpaired", "not-json", "valid"]);
    expect(frames[2]).toMatchObject({ batch: true, method: "initialize" });
    expect(hub.trace("codex-1")!.info().client).toEqual({ name: "tui", version: "0.1" });
    const lines = hub.trace("codex-1")!.transcript().trimEnd().split("\n");
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[2]!)).toMatchObject({ direction: "client", text: "not json" });
    expect(JSON.parse(lines[3]!)).toMatchObject({ direction: "client", batch: true, message: { method: "initialize" } });
  });
});
