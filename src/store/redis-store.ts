import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { Log } from "../shared/log.js";
import { RedisChannels } from "./redis-channels.js";
import { RedisHostSessions } from "./redis-host-sessions.js";
import { RedisInteractionStore } from "./redis-interactions.js";
import { RedisPlacementStore } from "./placement.js";
import { RedisKeys } from "./redis-keys.js";
import { RedisOwnership, type LeaseCommands } from "./redis-ownership.js";
import { ACQUIRE_SCRIPT, APPEND_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT } from "./redis-scripts.js";
import { RedisSessionLog, type AppendCommand } from "./redis-session-log.js";
import { RedisRecalledOutcomes } from "./redis-recalled-outcomes.js";
import { RedisSessionRoles } from "./redis-session-roles.js";
import { RedisSessionSettings } from "./redis-session-settings.js";
import { RedisSharedRecords } from "./shared-records.js";
import { STORE_COMMAND_TIMEOUT_MS, StoreHealth } from "./store-health.js";
import type { GatewayStore, StoreStats } from "./types.js";

export interface RedisStoreOptions {
  host: string;
  port: number;
  db: number;
  /** Key prefix (default `tau-gateway:`). */
  prefix?: string;
  /** Events kept per session log. */
  retention: number;
  /** Events older than this are trimmed and an idle log expires (0 = never). */
  maxAgeMs: number;
  /** Host lease time to live: how long a dead owner keeps its hosts. */
  leaseTtlMs: number;
  log: Log;
}

type CommandConnection = Redis & AppendCommand & LeaseCommands;

/**
 * The store on a Redis server: one connection for commands and scripts, one for SUBSCRIBE. A
 * command fails after a bounded number of retries instead of waiting forever for an unreachable
 * server, so callers (and /readyz) see the outage.
 */
export class RedisStore implements GatewayStore {
  readonly kind = "redis" as const;
  readonly replicaId = randomUUID();
  readonly ownership: RedisOwnership;
  readonly hostSessions: RedisHostSessions;
  readonly placement: RedisPlacementStore;
  readonly interactions: RedisInteractionStore;
  readonly settings: RedisSessionSettings;
  readonly roles: RedisSessionRoles;
  readonly recalls: RedisRecalledOutcomes;
  readonly records: RedisSharedRecords;
  readonly stats: StoreStats = { appends: 0, appendSeconds: 0, appendsFenced: 0, resumesRecovered: 0, resumesReset: 0 };
  private readonly redis: CommandConnection;
  private readonly subscriber: Redis;
  private readonly channels: RedisChannels;
  private readonly keys: RedisKeys;
  private readonly logs = new Map<string, RedisSessionLog>();
  private health: StoreHealth | undefined;

  constructor(private readonly options: RedisStoreOptions) {
    const connection = {
      host: options.host,
      port: options.port,
      db: options.db,
      lazyConnect: true,
      maxRetriesPerRequest: 2,
      connectTimeout: 2_000,
      commandTimeout: STORE_COMMAND_TIMEOUT_MS,
      retryStrategy: (attempt: number) => Math.min(100 * attempt, 1_000),
    };
    this.redis = new Redis(connection) as CommandConnection;
    this.subscriber = new Redis(connection);
    // An unreachable server is reported through commands failing and ready(); the connection's own error events only repeat it.
    for (const client of [this.redis, this.subscriber]) client.on("error", (error: Error) => options.log("debug", "store connection error", { error: error.message }));
    this.redis.defineCommand("tauGatewayAppend", { numberOfKeys: 4, lua: APPEND_SCRIPT });
    this.redis.defineCommand("tauGatewayAcquire", { numberOfKeys: 2, lua: ACQUIRE_SCRIPT });
    this.redis.defineCommand("tauGatewayRenew", { numberOfKeys: 1, lua: RENEW_SCRIPT });
    this.redis.defineCommand("tauGatewayRelease", { numberOfKeys: 1, lua: RELEASE_SCRIPT });
    this.keys = new RedisKeys(options.prefix ?? "tau-gateway:");
    this.channels = new RedisChannels(this.subscriber, options.log);
    this.ownership = new RedisOwnership(this.redis, this.keys, this.replicaId, options.leaseTtlMs, options.log);
    this.hostSessions = new RedisHostSessions(this.redis, this.channels, this.keys);
    this.placement = new RedisPlacementStore(this.redis, this.keys.prefix);
    this.settings = new RedisSessionSettings(this.redis, this.keys, this.channels, this.replicaId);
    this.roles = new RedisSessionRoles(this.redis, this.keys, this.channels);
    this.recalls = new RedisRecalledOutcomes(this.redis, this.keys, this.channels, this.replicaId);
    this.records = new RedisSharedRecords(this.redis, this.keys.prefix);
    // An answer the previous owner took and never acknowledged is taken over once its lease could have run out.
    this.interactions = new RedisInteractionStore(this.redis, { prefix: this.keys.prefix, replicaId: this.replicaId, claimIdleMs: options.leaseTtlMs, log: options.log });
  }

  /** Connects both connections; throws when the server cannot be reached. */
  async connect(): Promise<void> {
    await Promise.all([this.redis.connect(), this.subscriber.connect()]);
    await this.redis.ping();
    this.health = new StoreHealth({ commands: this.redis, subscriber: this.subscriber }, this.options.log);
  }


  /**
   * What the other shared parts (session placement, interactions) build their Redis
   * implementations on: the command connection, the shared SUBSCRIBE connection and the prefix.
   */
  get shared(): { redis: Redis; channels: RedisChannels; prefix: string } {
    return { redis: this.redis, channels: this.channels, prefix: this.keys.prefix };
  }

  sessionLog(sessionId: string): RedisSessionLog {
    let log = this.logs.get(sessionId);
    if (!log) {
      log = new RedisSessionLog(sessionId, {
        redis: this.redis,
        channels: this.channels,
        keys: this.keys,
        ownership: this.ownership,
        retention: this.options.retention,
        maxAgeMs: this.options.maxAgeMs,
        stats: this.stats,
      });
      this.logs.set(sessionId, log);
    }
    return log;
  }

  /** Known at once: the store's health is kept by its own commands and probes (store-health.ts). */
  async ready(): Promise<boolean> {
    return this.health?.reachable ?? false;
  }

  async close(): Promise<void> {
    this.health?.stop();
    await this.ownership.close();
    this.redis.disconnect();
    this.subscriber.disconnect();
  }
}
