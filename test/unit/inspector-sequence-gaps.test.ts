import { describe, expect, it } from "vitest";
import { InspectorHub } from "../../src/gateway/inspector/inspector-hub.js";
import { SequenceGaps } from "../../src/gateway/inspector/sequence-gaps.js";

/**
 * The inspector's sequence-gap verdict: what the gateway numbers (Ask event seqs per session, Tau
 * delta revisions per session) must reach each connection without holes, within one subscription.
 */

const event = (sessionId: string, seq: number) => ({
  jsonrpc: "2.0",
  method: "session/event",
  params: { sessionId, event: { type: "model.streaming", seq, payload: { delta: "x" } } },
});
const subscribe = (id: number, sessionId: string, params: Record<string, unknown> = {}) => ({ jsonrpc: "2.0", id, method: "session/subscribe", params: { sessionId, ...params } });
const delta = (sessionId: string, fromRevision: number | null, toRevision: number, reset = false) => ({
  version: 18,
  type: "session.delta",
  sessionId,
  fromRevision,
  toRevision,
  cause: { type: "assistant-stream" },
  delta: reset ? { type: "snapshot.reset", snapshot: {} } : { type: "snapshot.patch", changes: [] },
});
const observe = (id: string, sessionId: string) => ({ version: 18, type: "request", id, method: "session.observe", params: { sessionId } });

describe("sequence gaps in Ask events", () => {
  it("flags a seq that skips events of the session, naming the missing ones", () => {
    const gaps = new SequenceGaps("ask");
    expect(gaps.observe("server", event("s1", 1))).toBeUndefined();
    expect(gaps.observe("server", event("s1", 2))).toBeUndefined();
    const gap = gaps.observe("server", event("s1", 5));
    expect(gap).toEqual({ pointer: "/params/event/seq", keyword: "sequence", message: expect.stringContaining('seq 5 follows seq 2 of session "s1" on this connection; seqs 3–4 never sent') });
    expect(gaps.observe("server", event("s1", 7))!.message).toContain("seq 6 never sent");
    expect(gaps.observe("server", event("s1", 8))).toBeUndefined();
  });

  it("follows each session on its own, and takes a replay or a log begun again for no gap", () => {
    const gaps = new SequenceGaps("ask");
    gaps.observe("server", event("a", 1));
    gaps.observe("server", event("b", 10));
    expect(gaps.observe("server", event("a", 2))).toBeUndefined();
    expect(gaps.observe("server", event("b", 11))).toBeUndefined();
    // Duplicates (a resubscription replaying) and a new epoch numbering from 1 again.
    expect(gaps.observe("server", event("a", 2))).toBeUndefined();
    expect(gaps.observe("server", event("a", 1))).toBeUndefined();
    expect(gaps.observe("server", event("a", 2))).toBeUndefined();
    expect(gaps.observe("server", event("a", 4))).toBeDefined();
  });

  it("starts a session over at the client's subscribe (a live subscription starts at the newest seq)", () => {
    const gaps = new SequenceGaps("ask");
    gaps.observe("server", event("s1", 1));
    expect(gaps.observe("client", subscribe(7, "s1", { deliveryKind: "live" }))).toBeUndefined();
    expect(gaps.observe("server", event("s1", 40))).toBeUndefined();
    expect(gaps.observe("server", event("s1", 42))).toBeDefined();
    // A client sending something that looks like an event is not the gateway's numbering.
    expect(gaps.observe("client", event("s1", 99))).toBeUndefined();
    expect(gaps.observe("server", event("s1", 43))).toBeUndefined();
  });

  it("reads a bare transcript line (no direction) by its shape", () => {
    const gaps = new SequenceGaps("ask");
    gaps.observe(undefined, event("s1", 3));
    expect(gaps.observe(undefined, event("s1", 5))).toBeDefined();
    gaps.observe(undefined, subscribe(1, "s1"));
    expect(gaps.observe(undefined, event("s1", 9))).toBeUndefined();
  });

  it("numbers nothing in Codex or ACP", () => {
    for (const dialect of ["codex", "acp"] as const) {
      const gaps = new SequenceGaps(dialect);
      gaps.observe("server", event("s1", 1));
      expect(gaps.observe("server", event("s1", 9))).toBeUndefined();
    }
  });
});

describe("sequence gaps in Tau deltas", () => {
  it("flags a patch that does not continue from the last revision of its session", () => {
    const gaps = new SequenceGaps("tau");
    expect(gaps.observe("server", delta("s", 1, 2))).toBeUndefined();
    expect(gaps.observe("server", delta("s", 2, 5))).toBeUndefined();
    const gap = gaps.observe("server", delta("s", 7, 8));
    expect(gap).toMatchObject({ pointer: "/fromRevision", keyword: "sequence" });
    expect(gap!.message).toContain('fromRevision 7 does not continue from revision 5, where the last delta of session "s"');
    expect(gaps.observe("server", delta("s", 8, 9))).toBeUndefined();
  });

  it("takes a reset, a stale delta and a new observation for no gap", () => {
    const gaps = new SequenceGaps("tau");
    gaps.observe("server", delta("s", 1, 2));
    expect(gaps.observe("server", delta("s", null, 20, true))).toBeUndefined();
    expect(gaps.observe("server", delta("s", 3, 4))).toBeUndefined();
    expect(gaps.observe("server", delta("s", 20, 21))).toBeUndefined();
    gaps.observe("client", observe("o1", "s"));
    expect(gaps.observe("server", delta("s", 50, 51))).toBeUndefined();
    expect(gaps.observe("server", delta("other", 1, 2))).toBeUndefined();
  });
});

describe("the sequence-gap verdict on a connection", () => {
  it("marks the frame after the hole, and keeps the validator's verdict first when it found something too", () => {
    const hub = new InspectorHub();
    const connection = hub.connection("ask", "websocket /rpc");
    connection.server(JSON.stringify(event("s1", 1)));
    connection.server(JSON.stringify(event("s1", 3)));
    connection.server(JSON.stringify({ ...event("s1", 6), params: { sessionId: "s1", event: { type: "model.streaming", seq: 6, payload: { delta: 5 } } } }));
    const [first, second, third] = hub.trace("ask-1")!.frames();
    expect(first!.verdict).toEqual({ status: "valid", subject: "session/event", issues: [] });
    expect(second!.verdict.status).toBe("sequence-gap");
    expect(second!.verdict.issues).toEqual([expect.objectContaining({ pointer: "/params/event/seq", keyword: "sequence" })]);
    expect(third!.verdict.status).toBe("invalid");
    expect(third!.verdict.issues.map((i) => i.keyword).at(-1)).toBe("sequence");
  });
});
