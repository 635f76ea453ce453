import { describe, expect, it } from "vitest";
import { rpcError } from "./support/ask-client.js";
import { expectContiguous, openSession, payloadsOf } from "./support/ask-events.js";
import { cleanupsAfterEach } from "./support/cleanups.js";
import { startTestGateway } from "./support/gateway.js";
import { TauTestClient } from "./support/tau-client.js";

/**
 * session/close as Ask hosts close a session, in the order a subscriber sees it: what waits for an
 * answer is cancelled, the running turn is interrupted and ends, `session.ended` comes last, and
 * from then on the session is gone for every connection of the gateway — while Tau, which cannot
 * delete a session, keeps it.
 */

const cleanups = cleanupsAfterEach();

const gateway = () => cleanups.stopAfterTest(startTestGateway());

describe("session/close", () => {
  it("a turn waiting on ask_user: the question is cancelled, the turn ends, session.ended is the last event", async () => {
    const gw = await gateway();
    const client = await gw.client();
    const sessionId = await openSession(client);
    const { turnId } = await client.request("session/send", { sessionId, content: '/tool ask_user {"question":"Name?"}\n/sleep 20000' });
    const requested = await client.waitForEvent(sessionId, "input.requested");
    const interactionId = (requested.payload as { id: string }).id;

    expect(await client.request("session/close", { sessionId })).toEqual({ closed: true, sessionId });
    await client.waitForEvent(sessionId, "session.ended");
    const events = client.eventsOf(sessionId);
    const types = events.map((e) => e.type);
    expect(payloadsOf(events, "input.resolved")).toEqual([expect.objectContaining({ id: interactionId, status: "cancelled" })]);
    const terminals = events.filter((e) => ["turn.completed", "turn.failed", "turn.aborted"].includes(e.type));
    expect(terminals).toHaveLength(1);
    expect(terminals[0]!.payload).toMatchObject({ turnId });
    expect(types.indexOf("input.resolved")).toBeLessThan(types.indexOf(terminals[0]!.type));
    expect(types.at(-1)).toBe("session.ended");
    expectContiguous(events);

    expect((await rpcError(client.request("interaction/respond", { sessionId, interactionId, response: "Ada" }))).code).toBe(-32004);
    expect(client.invalid).toEqual([]);
  });

  it("is gone for every connection and every transport; Tau still has the session, idle", async () => {
    const gw = await gateway();
    const a = await gw.client();
    const sessionId = await openSession(a);
    const kept = await openSession(a);
    const emitted = gw.stack.bridge!.stats.eventsEmitted;
    expect(await a.request("session/close", { sessionId })).toEqual({ closed: true, sessionId });
    // The metrics are counters: the closed session's events (session.ended included) still count.
    expect(gw.stack.bridge!.stats.eventsEmitted).toBe(emitted + 1);

    // A connection opened afterwards: not listed, not reachable, not closable again.
    const b = await gw.client();
    const listed = (await b.request("session/list", {})).sessions.map((s: { sessionId: string }) => s.sessionId);
    expect(listed).toContain(kept);
    expect(listed).not.toContain(sessionId);
    for (const method of ["session/resume", "session/subscribe", "session/events", "session/close", "workspace/readState"]) {
      expect((await rpcError(b.request(method, { sessionId }))).code, method).toBe(-32004);
    }
    // The event stream over HTTP answers like an unknown session.
    const sse = await fetch(`${gw.rpcUrl.replace("ws://", "http://")}/events?sessionId=${sessionId}`);
    expect(sse.status).toBe(404);
    await sse.body?.cancel();

    const tau = await TauTestClient.connect(gw.host!.url);
    cleanups.push(() => tau.close());
    await tau.initialize();
    const hostSessions = (await tau.call<{ sessions: Array<{ sessionId: string; lifecycle: string }> }>("session.list", {})).sessions;
    expect(hostSessions).toContainEqual({ sessionId, lifecycle: "idle" });
    expect([...a.invalid, ...b.invalid]).toEqual([]);
  });

  it("two connections closing at once: one closes it, the other is told it is not there", async () => {
    const gw = await gateway();
    const a = await gw.client();
    const b = await gw.client();
    const sessionId = await openSession(a);
    await a.request("session/send", { sessionId, content: "/sleep 20000" });
    await a.waitForEvent(sessionId, "turn.started");
    const outcomes = await Promise.allSettled([a.request("session/close", { sessionId }), b.request("session/close", { sessionId })]);
    const closed = outcomes.filter((o) => o.status === "fulfilled").map((o) => (o as PromiseFulfilledResult<unknown>).value);
    const refused = outcomes.filter((o) => o.status === "rejected").map((o) => (o as PromiseRejectedResult).reason as { code: number });
    expect(closed).toEqual([{ closed: true, sessionId }]);
    expect(refused.map((e) => e.code)).toEqual([-32004]);
    await a.waitForEvent(sessionId, "session.ended");
    expect(payloadsOf(a.eventsOf(sessionId), "session.ended")).toHaveLength(1);
    expect([...a.invalid, ...b.invalid]).toEqual([]);
  });
});
