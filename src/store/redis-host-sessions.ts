import type { Redis } from "ioredis";
import type { RedisChannels } from "./redis-channels.js";
import type { RedisKeys } from "./redis-keys.js";
import type { HostSessions } from "./types.js";

/** The sessions of each Tau host, as a Redis set, and their announcements on a channel. */
export class RedisHostSessions implements HostSessions {
  constructor(
    private readonly redis: Redis,
    private readonly channels: RedisChannels,
    private readonly keys: RedisKeys,
  ) {}

  async announce(hostKey: string, sessionId: string): Promise<void> {
    await this.redis.multi().sadd(this.keys.sessions(hostKey), sessionId).publish(this.keys.announce(hostKey), sessionId).exec();
  }

  list(hostKey: string): Promise<string[]> {
    return this.redis.smembers(this.keys.sessions(hostKey));
  }

  onAnnounce(hostKey: string, listener: (sessionId: string) => void): Promise<() => void> {
    return this.channels.listen(this.keys.announce(hostKey), { message: listener, reconnected: () => undefined });
  }

  async forget(hostKey: string, sessionId: string): Promise<void> {
    await this.redis.srem(this.keys.sessions(hostKey), sessionId);
  }
}
