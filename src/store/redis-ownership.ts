import type { Redis } from "ioredis";
import type { Log } from "../shared/log.js";
import type { RedisKeys } from "./redis-keys.js";
import type { HostLeases } from "./types.js";

export interface LeaseCommands {
  tauGatewayAcquire(lease: string, fence: string, replicaId: string, ttlMs: number): Promise<number>;
  tauGatewayRenew(lease: string, token: string, ttlMs: number): Promise<number>;
  tauGatewayRelease(lease: string, token: string): Promise<number>;
}

interface Held {
  fence: number;
  /** This replica stops calling itself the owner at this time unless a renewal succeeded before. */
  until: number;
}

/**
 * Host leases in Redis: a replica takes a free lease with a new fence (INCR, so every holder ever
 * has a larger one than the last), renews it every third of its TTL, and counts itself the owner
 * only until the TTL it last renewed runs out — a replica cut off from Redis stops appending
 * before another one can take over. The lease token is `<fence>:<replicaId>`: the append script
 * refuses every other token, so a flushed store (counter back to 1) cannot revive an old fence.
 */
export class RedisOwnership implements HostLeases {
  private readonly held = new Map<string, Held>();
  private readonly claimed = new Set<string>();
  private readonly listeners = new Set<(hostKey: string, owned: boolean) => void>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Leases gained over this replica's life (metrics). */
  acquisitions = 0;

  constructor(
    private readonly redis: Redis & LeaseCommands,
    private readonly keys: RedisKeys,
    private readonly replicaId: string,
    private readonly ttlMs: number,
    private readonly log: Log,
  ) {}

  claim(hostKey: string): void {
    if (this.closed || this.claimed.has(hostKey)) return;
    this.claimed.add(hostKey);
    void this.tend(hostKey);
    this.timer ??= setInterval(() => {
      for (const key of this.claimed) void this.tend(key);
    }, Math.max(50, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  owns(hostKey: string): boolean {
    return this.fence(hostKey) !== undefined;
  }

  fence(hostKey: string): number | undefined {
    const held = this.held.get(hostKey);
    return held && Date.now() < held.until ? held.fence : undefined;
  }

  /** What the append script compares with the lease: the fence and who holds it. */
  token(fence: number): string {
    return `${fence}:${this.replicaId}`;
  }

  onChange(listener: (hostKey: string, owned: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  ownedCount(): number {
    return [...this.held.keys()].filter((key) => this.owns(key)).length;
  }

  /** Stops competing and gives up the leases held, so another replica takes over at once. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    const held = [...this.held.entries()];
    this.held.clear();
    await Promise.all(held.map(([key, h]) => this.redis.tauGatewayRelease(this.keys.lease(key), this.token(h.fence)).catch(() => undefined)));
  }

  private async tend(hostKey: string): Promise<void> {
    if (this.closed) return;
    const lease = this.keys.lease(hostKey);
    const held = this.held.get(hostKey);
    const askedAt = Date.now();
    try {
      if (held && askedAt < held.until) {
        const renewed = await this.redis.tauGatewayRenew(lease, this.token(held.fence), this.ttlMs);
        if (renewed === 1) held.until = askedAt + this.ttlMs;
        else this.lose(hostKey, "the lease is held by another replica");
        return;
      }
      if (held) this.lose(hostKey, "the lease ran out before it could be renewed");
      const fence = Number(await this.redis.tauGatewayAcquire(lease, this.keys.fence(hostKey), this.replicaId, this.ttlMs));
      if (fence > 0 && !this.closed) {
        this.held.set(hostKey, { fence, until: askedAt + this.ttlMs });
        this.acquisitions += 1;
        this.log("info", "host lease acquired", { hostKey, fence });
        this.notify(hostKey, true);
      }
    } catch (error) {
      this.log("warn", "host lease request failed", { hostKey, error: String(error) });
      const current = this.held.get(hostKey);
      if (current && Date.now() >= current.until) this.lose(hostKey, "the store could not be reached to renew the lease");
    }
  }

  private lose(hostKey: string, reason: string): void {
    if (!this.held.delete(hostKey)) return;
    this.log("warn", "host lease lost", { hostKey, reason });
    this.notify(hostKey, false);
  }

  private notify(hostKey: string, owned: boolean): void {
    for (const listener of [...this.listeners]) listener(hostKey, owned);
  }
}
