import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnswerConsumer, InteractionAnswer, SharedInteraction } from "../../../src/store/interactions.js";
import { MemoryInteractionStore } from "../../../src/store/memory-interactions.js";
import { RedisInteractionStore } from "../../../src/store/redis-interactions.js";
import { STORE_COMMAND_TIMEOUT_MS } from "../../../src/store/store-health.js";
import { startRedis, type RunningRedis } from "../../support/redis-server.js";

/**
 * Interactions shared by three replicas (three stores, each with its own connection) on one real
 * redis-server: A owns the host and opened the interactions, B and C answer them.
 */

let redis: RunningRedis;
let hostCounter = 0;

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis?.stop();
});

const replica = (replicaId: string, options: { claimIdleMs?: number; sweepGraceMs?: number } = {}) =>
  new RedisInteractionStore(redis.client(), { replicaId, claimIdleMs: options.claimIdleMs ?? 60_000, blockMs: 100, sweepGraceMs: options.sweepGraceMs });

/** A host key of its own per test, so tests share no stream or group. */
const newHost = () => `tau-${++hostCounter}`;

function approval(hostKey: string, n: number, overrides: Partial<SharedInteraction> = {}): SharedInteraction {
  return {
    id: `act_${n}`,
    sessionId: "s1",
    kind: "approval",
    hostKey,
    openedBy: "A",
    call: { sessionId: "s1", callId: `call-${n}`, toolName: "echo-args", arguments: { a: n } },
    data: { payload: { toolName: "echo-args" } },
    record: { id: `act_${n}`, kind: "approval", status: "pending", payload: { toolName: "echo-args" } },
    deadlineAt: Date.now() + 60_000,
    ...overrides,
  };
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!(await condition())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What Redis still holds of a host's answer stream: entries, and entries taken but not acknowledged. */
async function streamState(hostKey: string): Promise<{ length: number; unacknowledged: number }> {
  const client = redis.client();
  const stream = `tau-gateway:{${hostKey}}:interaction-answers`;
  const length = await client.xlen(stream);
  const pending = (await client.xpending(stream, "owners")) as [number, ...unknown[]];
  return { length, unacknowledged: Number(pending[0]) };
}

describe("pending interactions on Redis", () => {
  it("are listed by every replica, oldest first, and keep their numbering for the next owner", async () => {
    const hostKey = newHost();
    const [a, b, c] = [replica("A"), replica("B"), replica("C")];
    await a.open(approval(hostKey, 2), 2);
    await a.open(approval(hostKey, 1, { id: "input_1", kind: "user_input" }), 1);
    for (const store of [a, b, c]) expect((await store.pending(hostKey, "s1")).map((i) => i.id)).toEqual(["act_2", "input_1"]);
    expect(await b.pending(hostKey, "other")).toEqual([]);
    expect(await c.counters(hostKey, "s1")).toEqual({ approval: 2, user_input: 1 });
  });

  it("a concurrent answer on B and on C: exactly one is accepted, and the owner gets it exactly once", async () => {
    const hostKey = newHost();
    const [a, b, c] = [replica("A"), replica("B"), replica("C")];
    const rounds = 25;
    for (let n = 1; n <= rounds; n++) await a.open(approval(hostKey, n), n);
    const outcomes = await Promise.all(
      Array.from({ length: rounds }, (_, i) => {
        const id = `act_${i + 1}`;
        return Promise.all([
          b.resolve(hostKey, "s1", id, ["approval"], { action: "approve", by: "B" }),
          c.resolve(hostKey, "s1", id, ["approval"], { action: "reject", by: "C" }),
        ]);
      }),
    );
    for (const [onB, onC] of outcomes) expect(onB !== onC, "exactly one of B and C wins").toBe(true);
    // A later answer finds nothing pending.
    expect(await b.resolve(hostKey, "s1", "act_1", ["approval"], { action: "approve" })).toBe(false);
    expect(await a.pending(hostKey, "s1")).toEqual([]);

    const delivered: InteractionAnswer[] = [];
    const consumer = a.consume(hostKey, async (answer) => {
      delivered.push(answer);
      return true;
    });
    try {
      await until(() => delivered.length >= rounds, "every answer delivered");
      await until(async () => (await streamState(hostKey)).length === 0, "the stream emptied");
      await sleep(300);
      expect(delivered).toHaveLength(rounds);
      const byId = new Map(delivered.map((d) => [d.interaction.id, d]));
      expect(byId.size).toBe(rounds);
      outcomes.forEach(([onB], i) => {
        const answer = byId.get(`act_${i + 1}`)!;
        expect((answer.decision as { by: string }).by).toBe(onB ? "B" : "C");
        expect(answer.interaction.call.callId).toBe(`call-${i + 1}`);
      });
      expect(await streamState(hostKey)).toEqual({ length: 0, unacknowledged: 0 });
    } finally {
      await consumer.stop();
    }
  });

  it("refuses an id already in use, so an answer can never land on a newer interaction", async () => {
    const hostKey = newHost();
    const [a, b] = [replica("A"), replica("B")];
    await a.open(approval(hostKey, 1), 1);
    await expect(b.open(approval(hostKey, 1, { openedBy: "B", call: { sessionId: "s1", callId: "other", toolName: "echo-args" } }), 1)).rejects.toThrow(/never reused/);
    expect((await a.pending(hostKey, "s1")).map((i) => [i.id, i.call.callId])).toEqual([["act_1", "call-1"]]);
  });

  it("an answer for another kind does not resolve it", async () => {
    const hostKey = newHost();
    const [a, b] = [replica("A"), replica("B")];
    await a.open(approval(hostKey, 1), 1);
    expect(await b.resolve(hostKey, "s1", "act_1", ["user_input"], { action: "respond", response: "yes" })).toBe(false);
    expect((await b.pending(hostKey, "s1")).map((i) => i.id)).toEqual(["act_1"]);
  });

  it("a withdrawn interaction (deadline, cancelled call) is gone for every replica, and an answer racing it is either first or refused", async () => {
    const hostKey = newHost();
    const [a, b] = [replica("A"), replica("B")];
    await a.open(approval(hostKey, 1), 1);
    expect(await a.withdraw(hostKey, "s1", "act_1")).toBe(true);
    expect(await b.pending(hostKey, "s1")).toEqual([]);
    expect(await b.resolve(hostKey, "s1", "act_1", ["approval"], { action: "approve" })).toBe(false);
    expect(await a.withdraw(hostKey, "s1", "act_1")).toBe(false);

    for (let n = 2; n <= 21; n++) {
      await a.open(approval(hostKey, n), n);
      const [withdrawn, answered] = await Promise.all([
        a.withdraw(hostKey, "s1", `act_${n}`),
        b.resolve(hostKey, "s1", `act_${n}`, ["approval"], { action: "approve" }),
      ]);
      expect(withdrawn !== answered, `act_${n}: exactly one of the deadline and the answer wins`).toBe(true);
    }
  });
});

describe("votes on Redis", () => {
  it("reach the owner while the interaction stays pending, so every replica can still vote and the owner's decision still wins once", async () => {
    const hostKey = newHost();
    const [a, b, c] = [replica("A"), replica("B"), replica("C")];
    await a.open(approval(hostKey, 1), 1);
    const [onB, onC] = await Promise.all([
      b.vote(hostKey, "s1", "act_1", ["approval"], { action: "approve", voter: "B" }),
      c.vote(hostKey, "s1", "act_1", ["approval"], { action: "approve", voter: "C" }),
    ]);
    expect([onB, onC]).toEqual([true, true]);
    for (const store of [a, b, c]) expect((await store.pending(hostKey, "s1")).map((i) => i.id)).toEqual(["act_1"]);
    // Not of the kind the vote is for, or not pending: nothing is queued.
    expect(await b.vote(hostKey, "s1", "act_1", ["user_input"], { action: "respond" })).toBe(false);
    expect(await b.vote(hostKey, "s1", "act_9", ["approval"], { action: "approve" })).toBe(false);

    const delivered: InteractionAnswer[] = [];
    const consumer = a.consume(hostKey, async (answer) => {
      delivered.push(answer);
      return true;
    });
    try {
      await until(() => delivered.length === 2, "both votes delivered");
      expect(delivered.map((d) => (d.decision as { voter: string }).voter).sort()).toEqual(["B", "C"]);
      // Marked as votes: a replica that does not hold the call counts none of them.
      expect(delivered.map((d) => d.vote)).toEqual([true, true]);
      // The owner's count decides: its answer wins, and a vote after it finds nothing pending.
      expect(await a.resolve(hostKey, "s1", "act_1", ["approval"], { action: "approve", approvers: ["B", "C"] })).toBe(true);
      expect(await c.vote(hostKey, "s1", "act_1", ["approval"], { action: "approve", voter: "C" })).toBe(false);
      await until(() => delivered.length === 3, "the decision delivered");
      expect(delivered[2]!.vote).toBeUndefined();
      await until(async () => (await streamState(hostKey)).length === 0, "the stream emptied");
      expect(await streamState(hostKey)).toEqual({ length: 0, unacknowledged: 0 });
    } finally {
      await consumer.stop();
    }
  });
});

describe("delivery to the owner", () => {
  it("an owner killed after taking an answer, before acknowledging it: the next owner takes it over and delivers it once", async () => {
    const hostKey = newHost();
    const a = replica("A");
    const b = replica("B", { claimIdleMs: 300 });
    const c = replica("C");
    await a.open(approval(hostKey, 1), 1);

    // A owns the host: it takes the answer and dies while delivering it (no XACK ever).
    const takenByA: InteractionAnswer[] = [];
    const ownerA = a.consume(hostKey, (answer) => {
      takenByA.push(answer);
      return new Promise<boolean>(() => undefined);
    });
    expect(await c.resolve(hostKey, "s1", "act_1", ["approval"], { action: "approve" })).toBe(true);
    await until(() => takenByA.length === 1, "A taking the answer");
    await ownerA.stop();
    expect(await streamState(hostKey)).toEqual({ length: 1, unacknowledged: 1 });

    // B owns the host next: once the answer has been idle long enough, B delivers it, once.
    const deliveredByB: InteractionAnswer[] = [];
    let ownerB: AnswerConsumer | undefined;
    try {
      ownerB = b.consume(hostKey, async (answer) => {
        deliveredByB.push(answer);
        return true;
      });
      await until(() => deliveredByB.length === 1, "B taking the answer over");
      await until(async () => (await streamState(hostKey)).length === 0, "the answer acknowledged");
      await sleep(800); // more than two claim periods: nothing comes again
      expect(deliveredByB.map((d) => [d.interaction.id, d.decision])).toEqual([["act_1", { action: "approve" }]]);
      expect(takenByA).toHaveLength(1);
      expect(await streamState(hostKey)).toEqual({ length: 0, unacknowledged: 0 });
    } finally {
      await ownerB?.stop();
    }
  });

  it("an answer whose delivery failed (Tau unreachable) is delivered again; one delivered is never delivered again", async () => {
    const hostKey = newHost();
    const a = replica("A", { claimIdleMs: 200 });
    const b = replica("B");
    await a.open(approval(hostKey, 1), 1);
    await a.open(approval(hostKey, 2), 2);
    const attempts = new Map<string, number>();
    const consumer = a.consume(hostKey, async (answer) => {
      const count = (attempts.get(answer.interaction.id) ?? 0) + 1;
      attempts.set(answer.interaction.id, count);
      // act_1's first delivery fails; act_2 is delivered at once.
      return !(answer.interaction.id === "act_1" && count === 1);
    });
    try {
      await b.resolve(hostKey, "s1", "act_1", ["approval"], { action: "approve" });
      await b.resolve(hostKey, "s1", "act_2", ["approval"], { action: "approve" });
      await until(() => attempts.get("act_1") === 2, "act_1 tried again");
      await until(async () => (await streamState(hostKey)).length === 0, "both acknowledged");
      await sleep(600);
      expect(Object.fromEntries(attempts)).toEqual({ act_1: 2, act_2: 1 });
    } finally {
      await consumer.stop();
    }
  });

  it("a delivery still running is not taken over by its own owner, however long it takes", async () => {
    const hostKey = newHost();
    const a = replica("A", { claimIdleMs: 100 });
    await a.open(approval(hostKey, 1), 1);
    let calls = 0;
    let finish!: (delivered: boolean) => void;
    const consumer = a.consume(hostKey, () => {
      calls++;
      return new Promise<boolean>((resolve) => (finish = resolve));
    });
    try {
      await a.resolve(hostKey, "s1", "act_1", ["approval"], { action: "approve" });
      await until(() => calls === 1, "the delivery starting");
      await sleep(600);
      expect(calls).toBe(1);
      finish(true);
      await until(async () => (await streamState(hostKey)).length === 0, "acknowledged");
    } finally {
      await consumer.stop();
    }
  });

  it("answers accepted while no replica owned the host are delivered to the first owner", async () => {
    const hostKey = newHost();
    const [a, b] = [replica("A"), replica("B")];
    await a.open(approval(hostKey, 1), 1);
    await b.resolve(hostKey, "s1", "act_1", ["approval"], { action: "approve" });
    const delivered: string[] = [];
    const consumer = a.consume(hostKey, async (answer) => {
      delivered.push(answer.interaction.id);
      return true;
    });
    try {
      await until(() => delivered.length === 1, "the delivery");
      expect(delivered).toEqual(["act_1"]);
    } finally {
      await consumer.stop();
    }
  });

  it("an owner whose stream and group vanished (a flushed store) carries on with the answers accepted after", async () => {
    const hostKey = newHost();
    const [a, b] = [replica("A"), replica("B")];
    const delivered: string[] = [];
    const consumer = a.consume(hostKey, async (answer) => {
      delivered.push(answer.interaction.id);
      return true;
    });
    try {
      await a.open(approval(hostKey, 1), 1);
      await b.resolve(hostKey, "s1", "act_1", ["approval"], { action: "approve" });
      await until(() => delivered.length === 1, "the first delivery");
      await redis.client().flushall();
      await a.open(approval(hostKey, 2), 2);
      await b.resolve(hostKey, "s1", "act_2", ["approval"], { action: "approve" });
      await until(() => delivered.length === 2, "a delivery after the flush");
      expect(delivered).toEqual(["act_1", "act_2"]);
    } finally {
      await consumer.stop();
    }
  });

  it("the owner removes interactions long past their deadline, for every replica (their replica died with them)", async () => {
    const hostKey = newHost();
    const a = replica("A");
    const b = replica("B", { sweepGraceMs: 0 });
    await a.open(approval(hostKey, 1, { deadlineAt: Date.now() - 1 }), 1);
    await a.open(approval(hostKey, 2), 2);
    const consumer = b.consume(hostKey, async () => true);
    try {
      await until(async () => (await a.pending(hostKey, "s1")).length === 1, "the sweep");
      expect((await a.pending(hostKey, "s1")).map((i) => i.id)).toEqual(["act_2"]);
    } finally {
      await consumer.stop();
    }
  });

  it("a blocking read that waits its whole block for nothing is no failure, on a connection with the store's command timeout", { timeout: 30_000 }, async () => {
    // The store's own connection settings (redis-store.ts): every command times out after
    // STORE_COMMAND_TIMEOUT_MS. The block is longer, so a read bound by that timeout would fail every round.
    const client = new Redis({ host: "127.0.0.1", port: redis.port, lazyConnect: true, maxRetriesPerRequest: 2, commandTimeout: STORE_COMMAND_TIMEOUT_MS });
    const warnings: string[] = [];
    const store = new RedisInteractionStore(client, {
      replicaId: "A",
      claimIdleMs: 60_000,
      blockMs: STORE_COMMAND_TIMEOUT_MS + 500,
      log: (level, message, fields) => void (level !== "debug" && level !== "info" && warnings.push(`${message} ${JSON.stringify(fields)}`)),
    });
    // Each round sweeps (one ZRANGEBYSCORE) before its blocking read: the third sweep follows two whole reads.
    let sweeps = 0;
    const zrangebyscore = client.zrangebyscore.bind(client);
    client.zrangebyscore = ((...args: Parameters<typeof zrangebyscore>) => (sweeps++, zrangebyscore(...args))) as typeof client.zrangebyscore;
    const consumer = store.consume(newHost(), async () => true);
    try {
      await until(() => sweeps >= 3, "two whole blocking reads", 20_000);
      expect(warnings).toEqual([]);
    } finally {
      await consumer.stop();
      client.disconnect();
    }
  });
});

describe("the memory store", () => {
  it("delivers an accepted answer before resolve returns, and refuses a second one", async () => {
    const store = new MemoryInteractionStore();
    const delivered: string[] = [];
    store.consume("local", async (answer) => {
      delivered.push(answer.interaction.id);
      return true;
    });
    await store.open(approval("local", 1));
    const first = store.resolve("local", "s1", "act_1", ["approval"], { action: "approve" });
    expect(delivered).toEqual(["act_1"]);
    expect(await first).toBe(true);
    expect(await store.resolve("local", "s1", "act_1", ["approval"], { action: "reject" })).toBe(false);
    expect(await store.pending("local", "s1")).toEqual([]);
  });

  it("delivers a vote and keeps the interaction pending", async () => {
    const store = new MemoryInteractionStore();
    const delivered: unknown[] = [];
    store.consume("local", async (answer) => {
      delivered.push({ decision: answer.decision, vote: answer.vote });
      return true;
    });
    await store.open(approval("local", 1));
    expect(await store.vote("local", "s1", "act_1", ["approval"], { action: "approve", voter: "B" })).toBe(true);
    expect(delivered).toEqual([{ decision: { action: "approve", voter: "B" }, vote: true }]);
    expect((await store.pending("local", "s1")).map((i) => i.id)).toEqual(["act_1"]);
    expect(await store.resolve("local", "s1", "act_1", ["approval"], { action: "approve" })).toBe(true);
    expect(await store.vote("local", "s1", "act_1", ["approval"], { action: "approve", voter: "C" })).toBe(false);
  });
});
