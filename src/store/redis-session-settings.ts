import type { Redis } from "ioredis";
import type { RedisChannels } from "./redis-channels.js";
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
 * A mode set is also published on the session's settings channel, with the replica that set it.
 */
export class RedisSessionSettings implements SessionSettingsStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly channels: RedisChannels,
    private readonly replicaId: string,
  ) {}

  async read(sessionId: string): Promise<SessionSettings> {
    const fields = await this.redis.hgetall(this.keys.settings(sessionId));
    const grants = Object.keys(fields)
      .filter((field) => field.startsWith(GRANT))
      .map((field) => field.slice(GRANT.length));
    return { ...(fields[MODE] !== undefined ? { mode: fields[MODE] } : {}), grants, closed: fields[CLOSED] !== undefined };
  }

  async setMode(sessionId: string, mode: string): Promise<void> {
    const announcement: ModeAnnouncement = { mode, by: this.replicaId };
    const replies = await this.redis.multi().hset(this.keys.settings(sessionId), MODE, mode).publish(this.keys.settingsChanged(sessionId), JSON.stringify(announcement)).exec();
    const failed = replies?.find(([error]) => error);
    if (failed) throw failed[0];
  }

  onModeSetElsewhere(sessionId: string, listener: (mode: string) => void): Promise<() => void> {
    return this.channels.listen(this.keys.settingsChanged(sessionId), {
      message: (text) => {
        const { mode, by } = JSON.parse(text) as ModeAnnouncement;
        if (by !== this.replicaId) listener(mode);
      },
      reconnected: () => {
        this.read(sessionId).then(
          (settings) => settings.mode !== undefined && listener(settings.mode),
          () => undefined, // still unreachable: the next decision reads the store again
        );
      },
    });
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

/** What the settings channel carries when a mode is set. */
interface ModeAnnouncement {
  mode: string;
  /** The replica that set it (which has told its own clients already). */
  by: string;
}
