import type { Redis } from "ioredis";
import type { RedisKeys } from "./redis-keys.js";
import type { SessionSettings, SessionSettingsStore } from "./session-settings.js";

const MODE = "mode";
const CLOSED = "closed";
const GRANT = "grant:";

/**
 * Session settings as one Redis hash per session (`<prefix>{sessionId}:settings`): `mode`, a
 * `grant:<tool>` field per granted tool, and `closed`. Setting `closed` with HSETNX makes
 * beginning a close atomic, so two replicas closing one session at once cannot both succeed. The
 * hash has no expiry: a closed session stays closed for good, as Tau keeps the session for good.
 */
export class RedisSessionSettings implements SessionSettingsStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async read(sessionId: string): Promise<SessionSettings> {
    const fields = await this.redis.hgetall(this.keys.settings(sessionId));
    const grants = Object.keys(fields)
      .filter((field) => field.startsWith(GRANT))
      .map((field) => field.slice(GRANT.length));
    return { ...(fields[MODE] !== undefined ? { mode: fields[MODE] } : {}), grants, closed: fields[CLOSED] !== undefined };
  }

  async setMode(sessionId: string, mode: string): Promise<void> {
    await this.redis.hset(this.keys.settings(sessionId), MODE, mode);
  }

  async grant(sessionId: string, toolName: string): Promise<void> {
    await this.redis.hset(this.keys.settings(sessionId), GRANT + toolName, "1");
  }

  async beginClose(sessionId: string): Promise<boolean> {
    return (await this.redis.hsetnx(this.keys.settings(sessionId), CLOSED, String(Date.now()))) === 1;
  }

  async abandonClose(sessionId: string): Promise<void> {
    await this.redis.hdel(this.keys.settings(sessionId), CLOSED);
  }

  async closedAmong(sessionIds: readonly string[]): Promise<Set<string>> {
    if (sessionIds.length === 0) return new Set();
    const pipeline = this.redis.pipeline();
    for (const sessionId of sessionIds) pipeline.hexists(this.keys.settings(sessionId), CLOSED);
    const replies = (await pipeline.exec()) ?? [];
    const closed = new Set<string>();
    replies.forEach(([error, exists], i) => {
      if (error) throw error;
      if (exists === 1) closed.add(sessionIds[i]!);
    });
    return closed;
  }
}
