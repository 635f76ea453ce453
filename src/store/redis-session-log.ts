import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { RedisChannels } from "./redis-channels.js";
import type { RedisKeys } from "./redis-keys.js";
import type { RedisOwnership } from "./redis-ownership.js";
import type { AppendOutcome, EventToAppend, LiveBatch, LiveListener, LogInfo, SessionLogStore, StoreStats, StoredEvent } from "./types.js";

/** What the append script is called as (defined on the command connection by RedisStore). */
export interface AppendCommand {
  tauGatewayAppend(...args: Array<string | number>): Promise<Array<string | number>>;
}

export interface RedisSessionLogOptions {
  redis: Redis & AppendCommand;
  channels: RedisChannels;
  keys: RedisKeys;
  ownership: RedisOwnership;
  /** Events kept per session (stream MAXLEN). */
  retention: number;
  /** Events older than this are dropped, and an idle log expires after it (0 = never). */
  maxAgeMs: number;
  stats: StoreStats;
}

/** A session log kept in a Redis stream; see types.ts for what each operation promises. */
export class RedisSessionLog implements SessionLogStore {
  constructor(
    readonly sessionId: string,
    private readonly options: RedisSessionLogOptions,
  ) {}

  async append(events: EventToAppend[], options: { hostKey: string; fence: number | undefined; key: string; knownEpoch?: string }): Promise<AppendOutcome> {
    const { redis, keys, retention, maxAgeMs, ownership, stats } = this.options;
    const id = this.sessionId;
    const started = performance.now();
    const reply = await redis.tauGatewayAppend(
      keys.log(id),
      keys.meta(id),
      keys.idem(id),
      keys.lease(options.hostKey),
      options.fence === undefined ? "" : ownership.token(options.fence),
      options.key,
      options.knownEpoch ?? "",
      randomUUID(),
      retention,
      maxAgeMs,
      Date.now(),
      keys.events(id),
      events.length,
      ...events.flatMap((event) => [event.type, JSON.stringify(event.payload)]),
    );
    stats.appends += 1;
    stats.appendSeconds += (performance.now() - started) / 1000;
    switch (reply[0]) {
      case "fenced":
        stats.appendsFenced += 1;
        return { status: "fenced" };
      case "missing":
        return { status: "missing" };
      case "duplicate":
        return { status: "duplicate", epoch: String(reply[1]), lastSeq: Number(reply[2]) };
      default: {
        const firstSeq = Number(reply[2]);
        const newEpoch = Number(reply[4]) === 1;
        // A log that lost the history the appender knew begins with a reset of its own (redis-scripts.ts).
        const reset: StoredEvent[] = newEpoch && options.knownEpoch ? [{ seq: firstSeq, type: "session.reset", payload: { cause: "resync" } }] : [];
        const next = firstSeq + reset.length;
        return {
          status: "appended",
          epoch: String(reply[1]),
          firstSeq,
          lastSeq: Number(reply[3]),
          newEpoch,
          events: [...reset, ...events.map((event, i) => ({ seq: next + i, type: event.type, payload: event.payload }))],
        };
      }
    }
  }

  async read(afterSeq: number, limit?: number): Promise<StoredEvent[]> {
    const start = `${Math.max(0, Math.floor(afterSeq)) + 1}-0`;
    const entries = limit === undefined
      ? await this.options.redis.xrange(this.options.keys.log(this.sessionId), start, "+")
      : await this.options.redis.xrange(this.options.keys.log(this.sessionId), start, "+", "COUNT", limit);
    return entries.map(([id, fields]) => toEvent(id, fields));
  }

  async info(): Promise<LogInfo> {
    const { redis, keys } = this.options;
    const [meta, first] = await Promise.all([redis.hmget(keys.meta(this.sessionId), "epoch", "seq"), redis.xrange(keys.log(this.sessionId), "-", "+", "COUNT", 1)]);
    const epoch = meta[0] ?? undefined;
    const newestSeq = epoch === undefined ? 0 : Number(meta[1] ?? 0);
    const oldestSeq = first.length > 0 ? seqOf(first[0]![0]) : newestSeq + 1;
    return { epoch, newestSeq, oldestSeq };
  }

  subscribe(listener: LiveListener): Promise<() => void> {
    return this.options.channels.listen(this.options.keys.events(this.sessionId), {
      message: (text) => {
        // This replica's own batches come back too: told from the text's start, they are not parsed again.
        const head = BATCH_HEAD.exec(text);
        if (head && listener.has?.(head[1]!, Number(head[2]))) return;
        listener.batch(JSON.parse(text) as LiveBatch);
      },
      reconnected: () => listener.reconnected(),
    });
  }
}

/** The start of a published batch (redis-scripts.ts): its epoch and last seq. */
const BATCH_HEAD = /^\{"epoch":"([^"\\]*)","lastSeq":(\d+),/;

function seqOf(entryId: string): number {
  return Number(entryId.slice(0, entryId.indexOf("-")));
}

/** Entries are written as `t <ms> type <type> payload <json>` (redis-scripts.ts). */
function toEvent(entryId: string, fields: string[]): StoredEvent {
  return { seq: seqOf(entryId), type: fields[3] ?? "", payload: JSON.parse(fields[5] ?? "null") as unknown };
}
