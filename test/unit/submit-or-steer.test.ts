import { describe, expect, it } from "vitest";
import type { UserTurnResult } from "../../generated/tau-v18.js";
import { EventLog } from "../../src/bridge/event-log.js";
import { submitOrSteer, type TurnRequests } from "../../src/bridge/submit-or-steer.js";
import { TauResponseError } from "../../src/tau/upstream.js";

/**
 * The lost-race rule of the one delivery every dialect uses: a submit Tau refuses as busy because
 * another client's turn started first goes into that turn; busy for any other reason, or after the
 * caller gave up, is the `busy` outcome. Tau is played by a table of answers, the session by a real
 * event log and the turn it reports running.
 */

interface Sent {
  method: string;
  params: Record<string, unknown>;
}

/** A session whose submit Tau refuses busy; `runningThen` is the turn Tau reports running by then (another client's), if any. */
function rig(runningThen: string | undefined) {
  const log = new EventLog();
  const session = { sessionId: "s-1", log, activeTurnId: undefined as string | undefined };
  const sent: Sent[] = [];
  const upstream = {
    request: (method: string, params: Record<string, unknown>) => {
      sent.push({ method, params });
      if (method === "session.submit") {
        session.activeTurnId = runningThen;
        return Promise.reject(new TauResponseError("session.submit", "busy", "a turn is already running"));
      }
      // The message joins the queue, as Tau shows it; Tau answers its request when the turn settles.
      const mode = method === "session.queue" ? "queue" : "steer";
      const id = mode === "queue" ? String(params.historyEntryId) : "q-1";
      queueMicrotask(() => log.append("queue.updated", { messages: [{ id, mode, text: String(params.text) }] }));
      return new Promise<UserTurnResult>(() => undefined);
    },
  } as unknown as TurnRequests;
  return { session, sent, upstream };
}

describe("submitOrSteer", () => {
  it("a submit that lost the race to another client's turn steers into that turn", async () => {
    const { session, sent, upstream } = rig("other-turn");
    const delivery = await submitOrSteer(upstream, session, { text: "hello", turnId: "mine" });
    expect(delivery).toMatchObject({ kind: "steer", turnId: "other-turn", intoRunning: true });
    expect(sent.map((s) => s.method)).toEqual(["session.submit", "session.steer"]);
    expect(sent[1]!.params).toEqual({ sessionId: "s-1", text: "hello" });
  });

  it("a lost race queues after that turn when the caller asks for a queue", async () => {
    const { session, sent, upstream } = rig("other-turn");
    expect(await submitOrSteer(upstream, session, { text: "later", turnId: "mine", whileRunning: "queue" })).toMatchObject({ kind: "queue", turnId: "mine", intoRunning: true });
    expect(sent.map((s) => s.method)).toEqual(["session.submit", "session.queue"]);
  });

  it("busy with no turn running (a compaction, say) is the busy outcome, steering nothing", async () => {
    const { session, sent, upstream } = rig(undefined);
    const delivery = await submitOrSteer(upstream, session, { text: "hello", turnId: "mine" });
    expect(delivery.kind).toBe("busy");
    expect(delivery.kind === "busy" && delivery.error).toBeInstanceOf(TauResponseError);
    expect(sent.map((s) => s.method)).toEqual(["session.submit"]);
  });

  it("a caller that gave up meanwhile steers nothing into the other turn", async () => {
    const { session, sent, upstream } = rig("other-turn");
    const delivery = await submitOrSteer(upstream, session, { text: "hello", turnId: "mine", cancelled: () => true });
    expect(delivery.kind).toBe("busy");
    expect(sent.map((s) => s.method)).toEqual(["session.submit"]);
  });

  it("a refusal other than busy is thrown as Tau's", async () => {
    const log = new EventLog();
    const upstream = {
      request: () => Promise.reject(new TauResponseError("session.submit", "invalid_request", "no such thing")),
    } as unknown as TurnRequests;
    await expect(submitOrSteer(upstream, { sessionId: "s-1", log, activeTurnId: undefined }, { text: "x", turnId: "t" })).rejects.toMatchObject({
      code: "invalid_request",
    });
  });

  it("a submit is accepted once its turn starts, before Tau answers it; the send is announced before any event", async () => {
    const log = new EventLog();
    const order: string[] = [];
    const upstream = {
      request: () => {
        queueMicrotask(() => {
          order.push("event");
          log.append("turn.started", { turnId: "mine" });
        });
        // Tau answers a submit only when its turn settles: not within this test.
        return new Promise<UserTurnResult>(() => undefined);
      },
    } as unknown as TurnRequests;
    const delivery = await submitOrSteer(upstream, { sessionId: "s-1", log, activeTurnId: undefined }, {
      text: "x",
      turnId: "mine",
      onSend: (sent) => order.push(`sent ${sent.kind} ${sent.turnId}`),
    });
    expect(delivery).toMatchObject({ kind: "submit", turnId: "mine", intoRunning: false });
    expect(order).toEqual(["sent submit mine", "event"]);
  });
});
