import type { Log } from "../shared/log.js";
import { MemoryStore } from "./memory-store.js";
import { parseStoreTarget } from "./store-url.js";
import type { GatewayStore } from "./types.js";

export { parseStoreTarget, type StoreTarget } from "./store-url.js";
export type * from "./types.js";
export { MemoryStore } from "./memory-store.js";
export { STORE_UNAVAILABLE_MESSAGE, storeUnavailableOperation } from "./unavailable.js";
import { errorText } from "../shared/unknown-values.js";
// A type only: ioredis is loaded when a Redis store is opened, not by everything that imports the store.
export type { RedisStore } from "./redis-store.js";

export interface OpenStoreOptions {
  /** Events kept per session log (the --event-retention setting). */
  retention: number;
  /** Redis: events older than this are trimmed, an idle log expires (0 = never; default one day). */
  maxAgeMs?: number;
  /** Redis: host lease time to live (default 10 000 ms). */
  leaseTtlMs?: number;
  /** Redis: key prefix (default `tau-gateway:`). */
  prefix?: string;
  log?: Log;
}

export const DEFAULT_EVENT_MAX_AGE_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_LEASE_TTL_MS = 10_000;

/**
 * The store named by `url` (`memory` or `redis://HOST:PORT[/DB]`), connected. Throws on a bad URL
 * or an unreachable server.
 *
 * The session → host placement and the shared interactions live beside the session logs, on the
 * same connections and key prefix; `ready()` and `close()` cover them all.
 */
export async function openStore(url: string, options: OpenStoreOptions): Promise<GatewayStore> {
  const target = parseStoreTarget(url);
  if (target.kind === "memory") return new MemoryStore();
  const { RedisStore } = await import("./redis-store.js");
  const store = new RedisStore({
    host: target.host,
    port: target.port,
    db: target.db,
    prefix: options.prefix,
    retention: options.retention,
    maxAgeMs: options.maxAgeMs ?? DEFAULT_EVENT_MAX_AGE_MS,
    leaseTtlMs: options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
    log: options.log ?? (() => undefined),
  });
  try {
    await store.connect();
  } catch (error) {
    await store.close();
    throw new Error(`cannot reach the store at ${target.url}: ${errorText(error)}`);
  }
  return store;
}
