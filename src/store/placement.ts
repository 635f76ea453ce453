import type { Redis } from "ioredis";

/**
 * Which Tau host each session lives on, shared by every gateway replica. A session is placed once,
 * when it is created on a host (or first found there), and stays on that host: Tau cannot move a
 * session. A host's load is the number of sessions placed on it and not released (closed); new
 * sessions go to the least-loaded host that is reachable.
 *
 * Host keys are stable names for upstream URLs (the URL without credentials).
 */
export interface PlacementStore {
  /** The host the session was placed on; undefined when it was never placed. */
  hostOf(sessionId: string): Promise<string | undefined>;
  /** The session lives on `hostKey` and counts towards its load (placing it again elsewhere moves it). */
  place(sessionId: string, hostKey: string): Promise<void>;
  /** The session was closed: it no longer counts towards its host's load, and stays placed there. */
  release(sessionId: string): Promise<void>;
  /** Sessions placed on the host and not released. */
  load(hostKey: string): Promise<number>;
}

/** One process's placements (the default store): what a single replica needs. */
export class MemoryPlacementStore implements PlacementStore {
  private readonly hosts = new Map<string, string>();
  private readonly active = new Map<string, Set<string>>();

  async hostOf(sessionId: string): Promise<string | undefined> {
    return this.hosts.get(sessionId);
  }

  async place(sessionId: string, hostKey: string): Promise<void> {
    const previous = this.hosts.get(sessionId);
    if (previous !== undefined && previous !== hostKey) this.active.get(previous)?.delete(sessionId);
    this.hosts.set(sessionId, hostKey);
    let sessions = this.active.get(hostKey);
    if (!sessions) this.active.set(hostKey, (sessions = new Set()));
    sessions.add(sessionId);
  }

  async release(sessionId: string): Promise<void> {
    const hostKey = this.hosts.get(sessionId);
    if (hostKey !== undefined) this.active.get(hostKey)?.delete(sessionId);
  }

  async load(hostKey: string): Promise<number> {
    return this.active.get(hostKey)?.size ?? 0;
  }
}

export const DEFAULT_KEY_PREFIX = "tau-gateway:";

/**
 * Placements in Redis: per session a string `<prefix>placement:{<sessionId>}` holding its host key,
 * per host a set `<prefix>host:{<hostKey>}:sessions` of the sessions that count towards its load.
 * The hash tags keep each key in its own slot, so the two keys of a placement are written one after
 * the other rather than in one script: a replica that dies between the two leaves a session placed
 * but not counted, which only makes its host look a little less loaded.
 */
export class RedisPlacementStore implements PlacementStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string = DEFAULT_KEY_PREFIX,
  ) {}

  async hostOf(sessionId: string): Promise<string | undefined> {
    return (await this.redis.get(this.placementKey(sessionId))) ?? undefined;
  }

  async place(sessionId: string, hostKey: string): Promise<void> {
    const previous = await this.redis.getset(this.placementKey(sessionId), hostKey);
    if (previous !== null && previous !== hostKey) await this.redis.srem(this.loadKey(previous), sessionId);
    await this.redis.sadd(this.loadKey(hostKey), sessionId);
  }

  async release(sessionId: string): Promise<void> {
    const hostKey = await this.hostOf(sessionId);
    if (hostKey !== undefined) await this.redis.srem(this.loadKey(hostKey), sessionId);
  }

  async load(hostKey: string): Promise<number> {
    return this.redis.scard(this.loadKey(hostKey));
  }

  private placementKey(sessionId: string): string {
    return `${this.prefix}placement:{${sessionId}}`;
  }

  private loadKey(hostKey: string): string {
    return `${this.prefix}host:{${hostKey}}:sessions`;
  }
}
