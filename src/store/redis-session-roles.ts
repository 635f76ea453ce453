import type { Redis } from "ioredis";
import type { RedisChannels } from "./redis-channels.js";
import type { RedisKeys } from "./redis-keys.js";
import type { SessionRole, SessionRoleRecord, SessionRoleStore } from "./session-roles.js";

const OWNER = "owner";
const ROLE = "role:";
const ROLES: ReadonlySet<string> = new Set<SessionRole>(["owner", "controller", "observer"]);

/**
 * Session roles as one Redis hash per session (`<prefix>{sessionId}:roles`): `owner`, and a
 * `role:<principal>` field per granted role. Every replica reads it for each check, so a grant
 * through one replica holds on all of them at once. Setting the owner with HSETNX keeps the first
 * creator's. Like the session settings the hash has no expiry: Tau keeps the session for good.
 * A role granted or revoked is also published on the session's roles channel, in the same
 * transaction, so every replica (this one too) hears of it once it holds.
 */
export class RedisSessionRoles implements SessionRoleStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly channels: RedisChannels,
  ) {}

  async read(sessionId: string): Promise<SessionRoleRecord> {
    const fields = await this.redis.hgetall(this.keys.roles(sessionId));
    const granted: Record<string, SessionRole> = Object.create(null) as Record<string, SessionRole>;
    for (const [field, value] of Object.entries(fields)) {
      if (field.startsWith(ROLE) && ROLES.has(value)) granted[field.slice(ROLE.length)] = value as SessionRole;
    }
    return { ...(fields[OWNER] !== undefined ? { owner: fields[OWNER] } : {}), granted };
  }

  async setOwner(sessionId: string, principal: string): Promise<void> {
    await this.redis.hsetnx(this.keys.roles(sessionId), OWNER, principal);
  }

  async setRole(sessionId: string, principal: string, role: SessionRole | null): Promise<void> {
    const key = this.keys.roles(sessionId);
    const write = role === null ? this.redis.multi().hdel(key, ROLE + principal) : this.redis.multi().hset(key, ROLE + principal, role);
    const replies = await write.publish(this.keys.rolesChanged(sessionId), principal).exec();
    const failed = replies?.find(([error]) => error);
    if (failed) throw failed[0];
  }

  onChange(sessionId: string, listener: () => void): Promise<() => void> {
    return this.channels.listen(this.keys.rolesChanged(sessionId), { message: () => listener(), reconnected: () => listener() });
  }
}
