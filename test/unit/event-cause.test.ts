import { describe, expect, it } from "vitest";
import { EventLog } from "../../src/bridge/event-log.js";
import { causeOfWrite, currentEventCause, trackEventCauses, withEventCause, type EventCause } from "../../src/shared/event-cause.js";
import { connectionOrder, WEBSOCKET_TRANSPORT } from "../../src/transports/outbound-policy.js";
import { ASK_OUTBOUND } from "../../src/transports/ask-jsonrpc.js";
import { OutboundSequencer } from "../../src/transports/outbound-sequencer.js";

/**
 * The cause a message to a client carries to the inspector: the session event whose delivery sent
 * it (directly or after awaiting something), declared again when the sequencer writes it later.
 */

/** A sequencer whose writes record the cause a tap at the socket would read. */
function tapped() {
  const writes: Array<[string, EventCause | undefined]> = [];
  const sequencer = new OutboundSequencer<string>((text) => writes.push([text, causeOfWrite()]), connectionOrder(ASK_OUTBOUND, WEBSOCKET_TRANSPORT));
  return { sequencer, writes };
}

describe("event causes", () => {
  it("are not tracked until something reads them: the log and the sequencer run as without them", () => {
    const { sequencer, writes } = tapped();
    const log = new EventLog({ sessionId: "s" });
    log.subscribe(() => sequencer.send("n"));
    log.append("session.created", { sessionId: "s" });
    expect(writes).toEqual([["n", undefined]]);
    expect(withEventCause({ sessionId: "s", seq: 1 }, () => currentEventCause())).toBeUndefined();
  });

  it("name the event a listener was handed, for what it sends at once, after awaiting, and what waits behind an open answer", async () => {
    trackEventCauses();
    const { sequencer, writes } = tapped();
    const log = new EventLog({ sessionId: "s" });
    let later: Promise<void> | undefined;
    log.subscribe((event) => {
      sequencer.send(`now ${event.seq}`);
      later = Promise.resolve().then(async () => {
        await new Promise((resolve) => setImmediate(resolve));
        sequencer.send(`later ${event.seq}`);
      });
    });
    log.append("session.created", { sessionId: "s" });
    await later;
    // A request's answer is still open: an Ask connection holds what else it sends behind it.
    const slot = sequencer.reserve();
    log.append("turn.started", { turnId: "t" });
    sequencer.send("uncaused");
    expect(writes.map(([text]) => text)).toEqual(["now 1", "later 1"]);
    await slot.fill("answer");
    await later;
    expect(writes).toEqual([
      ["now 1", { sessionId: "s", seq: 1, type: "session.created" }],
      ["later 1", { sessionId: "s", seq: 1, type: "session.created" }],
      ["answer", undefined],
      ["now 2", { sessionId: "s", seq: 2, type: "turn.started" }],
      ["uncaused", undefined],
      ["later 2", { sessionId: "s", seq: 2, type: "turn.started" }],
    ]);
  });

  it("belong to the log's session only: a log without one names no cause", () => {
    trackEventCauses();
    const seen: Array<EventCause | undefined> = [];
    const log = new EventLog();
    log.subscribe(() => seen.push(currentEventCause()));
    log.append("session.created", { sessionId: "s" });
    expect(seen).toEqual([undefined]);
  });
});
