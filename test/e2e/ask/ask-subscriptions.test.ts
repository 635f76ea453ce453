import { describe, expect, it } from "vitest";
import type { Event } from "../../../generated/ask-v1.0.js";
import { RpcError } from "../../support/ask-client.js";
import { expectContiguous, expectOneTerminalPerTurn, openSession, runTurn, waitForTerminal } from "../../support/ask-events.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { startTestGateway, type TestGatewayOptions } from "../../support/gateway.js";

/**
 * Delivery over `/rpc`: live, replay and includeSnapshot subscriptions (each delivers every event
 * once, in order, with no gap), re-subscribing, polling with limit/hasMore, and retention.
 */

const cleanups = cleanupsAfterEach();

const gateway = (options: TestGatewayOptions = {}) => cleanups.stopAfterTest(startTestGateway(options));

const LONG_REPLY = "/sleep 1000\nthe quick brown fox jumps over the lazy dog again and again";

describe("session/subscribe", () => {
  it("live, replay after a seq, and includeSnapshot: every event once, in seq order, no gap", async () => {
    const gw = await gateway();
    const owner = await gw.client();
    const sessionId = await openSession(owner);
    await runTurn(owner, sessionId, "warm up");
    const before = owner.eventsOf(sessionId);
    const newest = before.at(-1)!.seq;

    // Subscribe while the next turn runs, so appends race the subscriptions.
    const [live, replay, snap] = [await gw.client(), await gw.client(), await gw.client()];
    const { turnId } = await owner.request("session/send", { sessionId, content: LONG_REPLY });
    await owner.waitFor(() => owner.eventsOf(sessionId).some((e) => e.type === "turn.started" && (e.payload as { turnId: string }).turnId === turnId), "the turn to start");

    expect(await live.request("session/subscribe", { sessionId, deliveryKind: "live" })).toEqual({ subscription: { sessionId, deliveryKind: "live" } });
    const liveFrom = (await live.request("session/events", { sessionId })).events.at(-1).seq + 1;

    await replay.request("session/subscribe", { sessionId, deliveryKind: "replay", afterSeq: 3 });

    const subscribed = await snap.request("session/subscribe", { sessionId, afterSeq: 2, includeSnapshot: true, deliveryKind: "web-remote-replayable" });
    expect(subscribed.subscription).toEqual({ sessionId, deliveryKind: "web-remote-replayable" });
    const snapshot: Event[] = subscribed.snapshot;
    expect(snapshot[0]!.seq).toBe(3);
    expectContiguous(snapshot, 3);

    await waitForTerminal(owner, sessionId, turnId);
    const all = owner.eventsOf(sessionId);
    expect(all.length).toBeGreaterThan(newest);
    for (const c of [live, replay, snap]) await c.waitFor(() => c.eventsOf(sessionId).at(-1)?.seq === all.at(-1)!.seq, "the last event");

    // live: only what came after subscribing, possibly from the middle of the turn.
    expect(live.eventsOf(sessionId)[0]!.seq).toBeLessThanOrEqual(liveFrom);
    expectContiguous(live.eventsOf(sessionId), live.eventsOf(sessionId)[0]!.seq);
    expect(live.eventsOf(sessionId)).toEqual(all.slice(live.eventsOf(sessionId)[0]!.seq - 1));
    // replay: everything after seq 3.
    expect(replay.eventsOf(sessionId)).toEqual(all.slice(3));
    // includeSnapshot: the result holds the missed events, notifications continue right after them.
    expect([...snapshot, ...snap.eventsOf(sessionId)]).toEqual(all.slice(2));
    expectContiguous(all);
    expectOneTerminalPerTurn(all);
    for (const c of [owner, live, replay, snap]) expect(c.invalid).toEqual([]);
  });

  it("re-subscribing replaces the cursor; a live subscription of an idle session receives nothing until new events", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    await runTurn(client, sessionId, "one");
    const first = client.eventsOf(sessionId);
    expectContiguous(first);

    // Again from seq 2: the events after it are delivered once more, in order, on the new subscription.
    await client.request("session/subscribe", { sessionId, afterSeq: 2 });
    await client.waitFor(() => client.eventsOf(sessionId).length === first.length * 2 - 2, "the replay");
    expect(client.eventsOf(sessionId).slice(first.length)).toEqual(first.slice(2));

    // live now: nothing, then exactly the next turn's events.
    await client.request("session/subscribe", { sessionId, deliveryKind: "live" });
    const mark = client.eventsOf(sessionId).length;
    const { sent } = await runTurn(client, sessionId, "two");
    const next = client.eventsOf(sessionId).slice(mark);
    expect(next[0]).toMatchObject({ seq: first.length + 1, type: "turn.started", payload: { turnId: sent.turnId } });
    expectContiguous(next, first.length + 1);
    expect(client.invalid).toEqual([]);
  });

  it("subscribing twice to two sessions on one connection keeps them apart", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const s1 = await openSession(client);
    const { session } = await client.request("session/create", {});
    const s2: string = session.sessionId;
    await client.request("session/subscribe", { sessionId: s2 });
    await Promise.all([runTurn(client, s1, "to one"), runTurn(client, s2, "to two")]);
    for (const sessionId of [s1, s2]) {
      expectContiguous(client.eventsOf(sessionId));
      expect(client.eventsOf(sessionId)[0]).toEqual({ type: "session.created", seq: 1, payload: { sessionId } });
    }
    expect(client.invalid).toEqual([]);
  });

  it("a long streamed reply: live subscribers, a later replay and session/events see the same events with the same seq, and the text is the reply", async () => {
    const gw = await gateway();
    const owner = await gw.client();
    const sessionId = await openSession(owner);
    const [first, second] = [await gw.client(), await gw.client()];
    for (const c of [first, second]) await c.request("session/subscribe", { sessionId, deliveryKind: "live" });
    // About 500 chunks of 8 characters: the gateway reads many of them at once and merges their chunks.
    const line = "streamed text that arrives in many small chunks ".repeat(80).trim();
    const { terminal } = await runTurn(owner, sessionId, line);
    const all = owner.eventsOf(sessionId);
    for (const c of [first, second]) await c.waitFor(() => c.eventsOf(sessionId).at(-1)?.seq === all.at(-1)!.seq, "the last event");

    const replay = await gw.client();
    await replay.request("session/subscribe", { sessionId, deliveryKind: "replay", afterSeq: 0 });
    await replay.waitFor(() => replay.eventsOf(sessionId).at(-1)?.seq === all.at(-1)!.seq, "the replay");
    const polled: Event[] = (await owner.request("session/events", { sessionId, afterSeq: 0 })).events;

    expectContiguous(all);
    expect(first.eventsOf(sessionId)).toEqual(all.slice(1));
    expect(second.eventsOf(sessionId)).toEqual(all.slice(1));
    expect(replay.eventsOf(sessionId)).toEqual(all);
    expect(polled).toEqual(all);
    const streamed = all.filter((e) => e.type === "model.streaming").map((e) => (e.payload as { delta: string }).delta);
    expect(streamed.join("")).toBe(`You said: ${line}`);
    expect((terminal.payload as { response: string }).response).toBe(`You said: ${line}`);
    expect(streamed.every((delta) => delta.length > 0)).toBe(true);
    for (const c of [owner, first, second, replay]) expect(c.invalid).toEqual([]);
  });
});

describe("session/events", () => {
  it("pages with limit; hasMore is true exactly while events remain", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    await runTurn(client, sessionId, "/bash echo paging\npage me");
    const all = client.eventsOf(sessionId);

    const pages: Event[][] = [];
    let afterSeq = 0;
    for (;;) {
      const page = await client.request("session/events", { sessionId, afterSeq, limit: 3 });
      expect(page.sessionId).toBe(sessionId);
      pages.push(page.events);
      afterSeq = page.events.at(-1)?.seq ?? afterSeq;
      expect(page.hasMore).toBe(afterSeq < all.at(-1)!.seq);
      if (!page.hasMore) break;
    }
    expect(pages.flat()).toEqual(all);
    expect(pages.slice(0, -1).every((p) => p.length === 3)).toBe(true);

    // Exactly the remaining count: no more.
    const exact = await client.request("session/events", { sessionId, afterSeq: all.length - 2, limit: 2 });
    expect(exact).toEqual({ sessionId, events: all.slice(-2), hasMore: false });
    expect(await client.request("session/events", { sessionId, afterSeq: all.length, limit: 5 })).toEqual({ sessionId, events: [], hasMore: false });
    // The Ask host's rules: no limit → hasMore null; limit 0 = no limit (everything, hasMore false); afterSeq -1 = from the start.
    expect(await client.request("session/events", { sessionId, afterSeq: all.length })).toEqual({ sessionId, events: [], hasMore: null });
    expect(await client.request("session/events", { sessionId, limit: 0 })).toEqual({ sessionId, events: all, hasMore: false });
    expect(await client.request("session/events", { sessionId, afterSeq: -1, limit: 2 })).toEqual({ sessionId, events: all.slice(0, 2), hasMore: true });
    const negative = await client.request("session/events", { sessionId, limit: -1 }).then(
      () => undefined,
      (e: RpcError) => e,
    );
    expect(negative).toMatchObject({ code: -32602, message: expect.stringContaining("limit") });
    expect(client.invalid).toEqual([]);
  });

  it("with a small retention, reading or replaying from before the oldest retained event is an error that says which seq is oldest", async () => {
    const gw = await gateway({ eventRetention: 5 });
    const client = await gw.client();
    const sessionId = await openSession(client);
    await runTurn(client, sessionId, "a reply long enough to stream in several chunks");
    const newest = client.eventsOf(sessionId).at(-1)!.seq;
    expect(newest).toBeGreaterThan(5);
    const oldest = newest - 4;

    for (const [method, params] of [
      ["session/events", { sessionId, afterSeq: 0 }],
      ["session/subscribe", { sessionId, afterSeq: oldest - 2 }],
      ["session/subscribe", { sessionId, includeSnapshot: true }],
    ] as const) {
      const error = await client.request(method, params).then(
        () => undefined,
        (e: RpcError) => e,
      );
      expect(error, method).toBeInstanceOf(RpcError);
      expect(error!.code).toBe(-32602);
      expect(error!.message).toContain(`the oldest retained seq is ${oldest}`);
      expect(error!.data).toMatchObject({ oldestSeq: oldest });
    }
    // Right at the edge it still works, and live needs no history at all.
    expect((await client.request("session/events", { sessionId, afterSeq: oldest - 1 })).events.map((e: Event) => e.seq)).toEqual([oldest, oldest + 1, oldest + 2, oldest + 3, newest]);
    expect(await client.request("session/subscribe", { sessionId, deliveryKind: "live" })).toMatchObject({ subscription: { deliveryKind: "live" } });
    expect(client.invalid).toEqual([]);
  });
});
