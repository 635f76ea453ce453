import type { Redis } from "ioredis";

/**
 * Small records replicas tell each other about, each under a key of its owner's choosing and
 * expiring unless written again: what one replica knows that another should be able to say (MCP's
 * Streamable HTTP sessions: which replica serves one). Only a store shared by several replicas has
 * them: a single process knows everything it serves.
 */
export interface SharedRecords {
  get(key: string): Promise<string | undefined>;
  /** Writes the record, which expires after `ttlMs` unless written again. */
  set(key: string, value: string, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
}

/** Shared records as Redis strings with an expiry (`<prefix>record:<key>`). */
export class RedisSharedRecords implements SharedRecords {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async get(key: string): Promise<string | undefined> {
    return (await this.redis.get(this.key(key))) ?? undefined;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.key(key), value, "PX", Math.max(1, Math.ceil(ttlMs)));
  }

  async delete(key: string): Promise<void> {
    await this.redis.del(this.key(key));
  }

  private key(key: string): string {
    return `${this.prefix}record:${key}`;
  }
}
