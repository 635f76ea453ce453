import type { Redis } from "ioredis";
import type { RedisChannels } from "./redis-channels.js";
import type { RedisKeys } from "./redis-keys.js";
import type { RecallClaim, RecalledOutcomes, SharedOutcome } from "./recalled-outcomes.js";

/**
 * Recalled outcomes as one Redis string per key (`<prefix>{recall:<id>}`): a claim is `SET NX`
 * with the pending TTL, the outcome overwrites it with the kept TTL and is announced on the key's
 * channel, which a waiting replica listens to before it reads the key (so no announcement falls
 * between the read and the listening).
 */
export class RedisRecalledOutcomes implements RecalledOutcomes {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly channels: RedisChannels,
    private readonly replicaId: string,
  ) {}

  async claim(id: string, fingerprint: string, pendingMs: number): Promise<RecallClaim> {
    const held: Held = { fingerprint, by: this.replicaId };
    if ((await this.redis.set(this.keys.recall(id), JSON.stringify(held), "PX", pendingMs, "NX")) === "OK") return { state: "claimed" };
    return this.read(id);
  }

  async settle(id: string, fingerprint: string, outcome: SharedOutcome, keepMs: number): Promise<void> {
    const held: Held = { fingerprint, by: this.replicaId, outcome };
    await this.redis.multi().set(this.keys.recall(id), JSON.stringify(held), "PX", keepMs).publish(this.keys.recallSettled(id), "1").exec();
  }

  async settled(id: string, timeoutMs: number): Promise<RecallClaim> {
    let wake: () => void = () => undefined;
    const stop = await this.channels.listen(this.keys.recallSettled(id), { message: () => wake(), reconnected: () => wake() });
    try {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const woken = new Promise<void>((resolve) => (wake = resolve));
        const now = await this.read(id);
        if (now.state !== "held" || now.outcome !== undefined || Date.now() >= deadline) return now;
        // A claim let go expires without an announcement: read again at the latest when it would have.
        const ttl = await this.redis.pttl(this.keys.recall(id));
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([woken, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(10, Math.min(ttl, deadline - Date.now())))))]);
        clearTimeout(timer);
      }
    } finally {
      stop();
    }
  }

  private async read(id: string): Promise<RecallClaim> {
    const text = await this.redis.get(this.keys.recall(id));
    if (text === null) return { state: "free" };
    const held = JSON.parse(text) as Held;
    return { state: "held", fingerprint: held.fingerprint, ...(held.outcome ? { outcome: held.outcome } : {}) };
  }
}

/** What a key holds. */
interface Held {
  fingerprint: string;
  /** The replica that claimed it (for an operator reading Redis). */
  by: string;
  outcome?: SharedOutcome;
}
