import { describe, expect, it } from "vitest";
import { OutboundSequencer } from "../../src/transports/outbound-sequencer.js";
import { RequestOrder } from "../../src/transports/request-order.js";

/**
 * The two dialect-neutral parts of a connection's order (the Ask transports use them end to end,
 * see ask-ordering.test.ts; other dialects adopt them as they are): what goes out, and when a
 * request runs.
 */

const nextEventLoopTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A sequencer over a sink that records its writes. */
function recorded(options: { pauseAfterResponse?: boolean } = {}) {
  const writes: string[] = [];
  const sequencer = new OutboundSequencer((text) => writes.push(text), options);
  return { sequencer, texts: () => [...writes] };
}

describe("OutboundSequencer", () => {
  it("writes a message at once when no response is open", () => {
    const { sequencer, texts } = recorded();
    sequencer.send("n1");
    expect(texts()).toEqual(["n1"]);
  });

  it("holds messages behind an open response and writes them right after it", async () => {
    const { sequencer, texts } = recorded();
    const slot = sequencer.reserve();
    sequencer.send("event 1");
    sequencer.send("event 2");
    expect(texts()).toEqual([]);
    await slot.fill("response");
    expect(texts()).toEqual(["response", "event 1", "event 2"]);
  });

  it("writes responses in the order their places were reserved, whatever order they are filled in", async () => {
    const { sequencer, texts } = recorded();
    const [first, second, third] = [sequencer.reserve(), sequencer.reserve(), sequencer.reserve()];
    sequencer.send("event");
    const thirdWritten = third.fill("3");
    void second.fill("2");
    expect(texts()).toEqual([]);
    await first.fill("1");
    await thirdWritten;
    expect(texts()).toEqual(["1", "2", "3", "event"]);
  });

  it("a request that needs no response releases what waits behind it", async () => {
    const { sequencer, texts } = recorded();
    const slot = sequencer.reserve();
    sequencer.send("event");
    await slot.fill(undefined);
    expect(texts()).toEqual(["event"]);
  });

  it("with pauseAfterResponse, what follows a response goes out on a later event-loop turn, in its own write", async () => {
    const { sequencer, texts } = recorded({ pauseAfterResponse: true });
    const slot = sequencer.reserve();
    sequencer.send("turn started");
    sequencer.send("delta");
    await slot.fill("response");
    // The microtasks after the response have run; the rest waits for the event loop.
    await Promise.resolve();
    expect(texts()).toEqual(["response"]);
    await nextEventLoopTurn();
    expect(texts()).toEqual(["response", "turn started", "delta"]);
    // Sent while nothing is held: at once.
    sequencer.send("later");
    expect(texts().at(-1)).toBe("later");
  });

  it("with pauseAfterResponse, a message sent during the pause waits its turn behind what was held", async () => {
    const { sequencer, texts } = recorded({ pauseAfterResponse: true });
    const slot = sequencer.reserve();
    sequencer.send("held");
    await slot.fill("response");
    sequencer.send("sent during the pause");
    expect(texts()).toEqual(["response"]);
    await nextEventLoopTurn();
    await nextEventLoopTurn();
    expect(texts()).toEqual(["response", "held", "sent during the pause"]);
  });

  it("close writes what is ready, drops what waits behind an open response, and settles its slot", async () => {
    const { sequencer, texts } = recorded({ pauseAfterResponse: true });
    const answered = sequencer.reserve();
    sequencer.send("after the answer");
    const open = sequencer.reserve();
    sequencer.send("behind the open one");
    void answered.fill("answer");
    sequencer.close();
    await open.fill("too late");
    sequencer.send("after close");
    expect(texts()).toEqual(["answer", "after the answer"]);
  });

  it("keeps messages in order across many held ones (the queue compacts as it goes)", async () => {
    const { sequencer, texts } = recorded();
    const expected: string[] = [];
    for (let round = 0; round < 5; round++) {
      const slot = sequencer.reserve();
      for (let i = 0; i < 1500; i++) sequencer.send(`${round}:${i}`);
      const later = sequencer.reserve();
      await slot.fill(`response ${round}`);
      expected.push(`response ${round}`, ...Array.from({ length: 1500 }, (_, i) => `${round}:${i}`));
      await later.fill(undefined);
    }
    expect(texts()).toEqual(expected);
  });
});

describe("RequestOrder", () => {
  it("runs requests one after another in the order they entered, whatever each takes", async () => {
    const order = new RequestOrder();
    const log: string[] = [];
    const step = (name: string, ms: number) => async () => {
      log.push(`${name} start`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      log.push(`${name} end`);
      return name;
    };
    const turns = [order.enter(), order.enter(), order.enter()];
    const results = await Promise.all([turns[2]!.run(step("c", 1)), turns[0]!.run(step("a", 30)), turns[1]!.run(step("b", 1))]);
    expect(results).toEqual(["c", "a", "b"]);
    expect(log).toEqual(["a start", "a end", "b start", "b end", "c start", "c end"]);
  });

  it("a failed request does not hold up the next", async () => {
    const order = new RequestOrder();
    const failing = order.enter();
    const next = order.enter();
    await expect(failing.run(async () => Promise.reject(new Error("no")))).rejects.toThrow("no");
    expect(await next.run(async () => "ran")).toBe("ran");
  });

  it("a place released without running (a refused request) lets the next run once the ones before are done", async () => {
    const order = new RequestOrder();
    const slow = order.enter();
    const refused = order.enter();
    const next = order.enter();
    let finishSlow!: () => void;
    const slowRun = slow.run(() => new Promise<void>((resolve) => (finishSlow = resolve)));
    refused.release();
    let nextRan = false;
    const nextRun = next.run(async () => void (nextRan = true));
    await nextEventLoopTurn();
    expect(nextRan).toBe(false);
    finishSlow();
    await slowRun;
    await nextRun;
    expect(nextRan).toBe(true);
    // Releasing again after running changes nothing.
    slow.release();
    expect(await order.enter().run(async () => "still in order")).toBe("still in order");
  });
});
