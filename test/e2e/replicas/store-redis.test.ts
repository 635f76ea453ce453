import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type GatewayStore, type RedisStore, type LiveBatch } from "../../../src/store/index.js";
import { startRedis, type RunningRedis } from "../../support/redis-server.js";

/**
 * The Redis store against a real redis-server: the append script allocates every seq, refuses a
 * stale fence and adds nothing for a retried batch; retention trims; a lost log comes back with a
 * new epoch that begins with a reset; leases move to another replica when their holder goes.
 */

let redis: RunningRedis;
const stores: GatewayStore[] = [];

beforeAll(async () => {
  redis = await startRedis();
}, 60_000);

afterAll(async () => {
  for (const store of stores) await store.close();
  await redis?.stop();
});

async function open(options: { retention?: number; leaseTtlMs?: number; maxAgeMs?: number } = {}): Promise<RedisStore> {
  const store = (await openStore(`${redis.url}/0`, { retention: options.retention ?? 100, leaseTtlMs: options.leaseTtlMs ?? 1_000, maxAgeMs: options.maxAgeMs ?? 0 })) as RedisStore;
  stores.push(store);
  return store;
}

async function until<T>(read: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2)}`;
const ev = (n: number) => ({ type: "model.streaming", payload: { delta: `chunk ${n}` } });

describe("the Redis store", () => {
  it("refuses a store URL it cannot use, and an unreachable server", async () => {
    await expect(openStore("redis://127.0.0.1", { retention: 10 })).rejects.toThrow(/port is missing/);
    await expect(openStore("http://127.0.0.1:1", { retention: 10 })).rejects.toThrow(/memory or redis:\/\//);
    await expect(openStore("redis://127.0.0.1:1/0", { retention: 10 })).rejects.toThrow(/cannot reach the store/);
  });

  it("allocates seqs in the store, adds nothing for a retried batch and refuses a stale fence", async () => {
    const a = await open();
    const b = await open();
    const host = unique("host");
    a.ownership.claim(host);
    const fenceA = await until(() => a.ownership.fence(host), "replica A's lease");
    b.ownership.claim(host);
    const log = a.sessionLog(unique("s"));

    const first = await log.append([ev(1), ev(2)], { hostKey: host, fence: fenceA, key: "batch-1" });
    expect(first).toMatchObject({ status: "appended", firstSeq: 1, lastSeq: 2, newEpoch: true });
    const retried = await log.append([ev(1), ev(2)], { hostKey: host, fence: fenceA, key: "batch-1" });
    expect(retried).toEqual({ status: "duplicate", epoch: (first as { epoch: string }).epoch, lastSeq: 2 });
    expect((await log.read(0)).map((e) => e.seq)).toEqual([1, 2]);

    // B cannot append with a fence of its own making while A holds the lease.
    expect(b.ownership.owns(host)).toBe(false);
    expect(await b.sessionLog(log.sessionId).append([ev(3)], { hostKey: host, fence: fenceA + 1, key: "b-1" })).toEqual({ status: "fenced" });

    // A goes away (giving its lease up): B takes over with a larger fence, and A's fence is refused from then on.
    await a.close();
    stores.splice(stores.indexOf(a), 1);
    const fenceB = await until(() => b.ownership.fence(host), "replica B's lease after A's ran out");
    expect(fenceB).toBeGreaterThan(fenceA);
    const stale = await b.sessionLog(log.sessionId).append([ev(3)], { hostKey: host, fence: fenceA, key: "a-late" });
    expect(stale).toEqual({ status: "fenced" });
    const next = await b.sessionLog(log.sessionId).append([ev(3)], { hostKey: host, fence: fenceB, key: "b-2", knownEpoch: first.status === "appended" ? first.epoch : undefined });
    expect(next).toMatchObject({ status: "appended", firstSeq: 3, lastSeq: 3, newEpoch: false });
    expect((await b.sessionLog(log.sessionId).read(0)).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it("keeps the newest events by the retention, and says which seq is oldest", async () => {
    const store = await open({ retention: 5 });
    const host = unique("host");
    store.ownership.claim(host);
    const fence = await until(() => store.ownership.fence(host), "the lease");
    const log = store.sessionLog(unique("s"));
    for (let n = 1; n <= 12; n++) await log.append([ev(n)], { hostKey: host, fence, key: `k${n}` });
    expect(await log.info()).toMatchObject({ newestSeq: 12, oldestSeq: 8 });
    expect((await log.read(0)).map((e) => e.seq)).toEqual([8, 9, 10, 11, 12]);
    expect((await log.read(9, 2)).map((e) => e.seq)).toEqual([10, 11]);
  });

  it("publishes every batch live, and begins a new epoch with a reset once the log was lost", async () => {
    const store = await open();
    const host = unique("host");
    store.ownership.claim(host);
    const fence = await until(() => store.ownership.fence(host), "the lease");
    const log = store.sessionLog(unique("s"));
    const heard: LiveBatch[] = [];
    const stop = await log.subscribe({ batch: (b) => heard.push(b), reconnected: () => undefined });
    const first = await log.append([ev(1)], { hostKey: host, fence, key: "k1" });
    if (first.status !== "appended") throw new Error("not appended");
    await log.append([ev(2), ev(3)], { hostKey: host, fence, key: "k2", knownEpoch: first.epoch });
    await until(() => heard.length === 2 || undefined, "two live batches");
    expect(heard.flatMap((b) => b.events.map((e) => e.seq))).toEqual([1, 2, 3]);

    await redis.command("DEL", `tau-gateway:{${log.sessionId}}:log`, `tau-gateway:{${log.sessionId}}:meta`);
    expect(await log.info()).toMatchObject({ epoch: undefined, newestSeq: 0 });
    const after = await log.append([ev(4)], { hostKey: host, fence, key: "k3", knownEpoch: first.epoch });
    expect(after).toMatchObject({ status: "appended", newEpoch: true });
    if (after.status !== "appended") throw new Error("not appended");
    expect(after.epoch).not.toBe(first.epoch);
    // The new epoch never issues the old numbers again: it continues from the time (in ms).
    const base = after.firstSeq;
    expect(base).toBeGreaterThan(Date.now() - 600_000);
    expect(after.lastSeq).toBe(base + 1);
    expect((await log.read(0)).map((e) => [e.seq, e.type])).toEqual([
      [base, "session.reset"],
      [base + 1, "model.streaming"],
    ]);
    // The appender's own copy of the batch is numbered as the store numbered it, reset included.
    expect(after.events).toEqual(await log.read(0));
    stop();
  });

  it("does not hand a listener a live batch it says it has, and hands it the others", async () => {
    const store = await open();
    const host = unique("host");
    store.ownership.claim(host);
    const fence = await until(() => store.ownership.fence(host), "the lease");
    const log = store.sessionLog(unique("s"));
    const heard: LiveBatch[] = [];
    const asked: Array<[string, number]> = [];
    let newest = 0;
    const stop = await log.subscribe({
      batch: (b) => heard.push(b),
      reconnected: () => undefined,
      has: (epoch, lastSeq) => (asked.push([epoch, lastSeq]), lastSeq <= newest),
    });
    const first = await log.append([ev(1), ev(2)], { hostKey: host, fence, key: "k1" });
    if (first.status !== "appended") throw new Error("not appended");
    expect(first.events).toEqual(await log.read(0));
    await until(() => heard.length === 1 || undefined, "the first batch");
    newest = 3; // as a replica whose own append of seq 3 came back before pub/sub brought it
    await log.append([ev(3)], { hostKey: host, fence, key: "k2", knownEpoch: first.epoch });
    await log.append([ev(4)], { hostKey: host, fence, key: "k3", knownEpoch: first.epoch });
    await until(() => heard.length === 2 || undefined, "the batch not held");
    expect(heard.map((b) => b.events.map((e) => [e.seq, e.payload]))).toEqual([
      [[1, { delta: "chunk 1" }], [2, { delta: "chunk 2" }]],
      [[4, { delta: "chunk 4" }]],
    ]);
    expect(asked).toEqual([[first.epoch, 2], [first.epoch, 3], [first.epoch, 4]]);
    stop();
  });

  it("trims events older than the maximum age", async () => {
    const store = await open({ maxAgeMs: 1_000 });
    const host = unique("host");
    store.ownership.claim(host);
    const fence = await until(() => store.ownership.fence(host), "the lease");
    const log = store.sessionLog(unique("s"));
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    await log.append([ev(1)], { hostKey: host, fence, key: "k1" });
    await sleep(600);
    await log.append([ev(2)], { hostKey: host, fence, key: "k2" });
    await sleep(600);
    await log.append([ev(3)], { hostKey: host, fence, key: "k3" });
    const kept = await log.read(0);
    // The first event is older than the maximum age; whatever is kept ends with the newest.
    expect(kept.map((e) => e.payload)).not.toContainEqual({ delta: "chunk 1" });
    expect(kept.at(-1)?.payload).toEqual({ delta: "chunk 3" });
  });
});
