import type { Redis } from "ioredis";
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
 */
export class RedisSessionRoles implements SessionRoleStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
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
    if (role === null) await this.redis.hdel(this.keys.roles(sessionId), ROLE + principal);
    else await this.redis.hset(this.keys.roles(sessionId), ROLE + principal, role);
  }
}
