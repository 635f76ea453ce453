import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { draft } from "../../../src/bridge/event-draft.js";
import { LogAppender } from "../../../src/bridge/log-appender.js";
import { openStore, type LiveBatch, type RedisStore } from "../../../src/store/index.js";
import { startRedis, type RunningRedis } from "../../support/redis-server.js";

/**
 * The appender against a real Redis store: a loop turn's events go as one batch, streamed chunks
 * that queue behind a batch in flight join into one event (same text, same order), and nothing
 * else joins them: another kind, another message, an event with its own key.
 */

let redis: RunningRedis;
let store: RedisStore;

beforeAll(async () => {
  redis = await startRedis();
  store = (await openStore(`${redis.url}/0`, { retention: 1_000, leaseTtlMs: 5_000, maxAgeMs: 0 })) as RedisStore;
}, 60_000);

afterAll(async () => {
  await store?.close();
  await redis?.stop();
});

const text = (delta: string, messageId = "m1") => draft("model.streaming", { delta, messageId });

async function appender() {
  const host = `host-${Math.random().toString(36).slice(2)}`;
  store.ownership.claim(host);
  for (let i = 0; store.ownership.fence(host) === undefined; i++) {
    if (i > 400) throw new Error("no lease");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const log = store.sessionLog(`s-${Math.random().toString(36).slice(2)}`);
  const batches: LiveBatch[] = [];
  let epoch: string | undefined;
  const append = new LogAppender({ store: log, hostKey: host, knownEpoch: () => epoch, appended: (b) => ((epoch = b.epoch), batches.push(b)), log: () => undefined });
  return { append, log, batches, fence: store.ownership.fence(host) };
}

describe("LogAppender", () => {
  it("sends a loop turn's events as one batch, and joins the chunks that queue behind it", async () => {
    const { append, log, batches, fence } = await appender();
    append.push(draft("turn.started", { turnId: "t1" }), fence);
    for (let i = 0; i < 5; i++) append.push(text(`a${i}`), fence);
    await new Promise((resolve) => setImmediate(resolve)); // the first batch is on its way
    for (let i = 0; i < 50; i++) append.push(text(`b${i}`), fence);
    append.push(text("other message", "m2"), fence);
    append.push(draft("model.thinking", { delta: "hm", messageId: "m2" }), fence);
    append.push(text("keyed"), fence, "own-key");
    append.push(text("after"), fence);
    await append.flushed();

    const stored = await log.read(0);
    expect(stored.map((e) => [e.type, (e.payload as { delta?: string }).delta])).toEqual([
      ["turn.started", undefined],
      ["model.streaming", "a0a1a2a3a4"],
      ["model.streaming", Array.from({ length: 50 }, (_, i) => `b${i}`).join("")],
      ["model.streaming", "other message"],
      ["model.thinking", "hm"],
      ["model.streaming", "keyed"],
      ["model.streaming", "after"],
    ]);
    expect(stored[1]!.payload).toEqual({ delta: "a0a1a2a3a4", messageId: "m1" });
    // The first loop turn was one append; the rest queued behind it and left as batches, the keyed event alone.
    expect(batches[0]!.events.map((e) => e.seq)).toEqual([1, 2]);
    expect(batches.flatMap((b) => b.events)).toEqual(stored);
    expect(batches.find((b) => b.events.some((e) => (e.payload as { delta?: string }).delta === "keyed"))!.events).toHaveLength(1);
  });
});
