import type { Redis } from "ioredis";

/**
 * The Lua scripts that keep a host's interactions consistent across replicas: each runs atomically
 * on the Redis server, so two replicas answering at once cannot both win, and an answer cannot win
 * against the owner's deadline or Tau's cancel and lose at the same time.
 */

/**
 * Publishes an interaction, unless its id is taken (ids are never reused: 0 then).
 * KEYS pending, order, numbers, ordinal, deadlines; ARGV id, interaction JSON, kind, number, deadlineAt, deadline member.
 */
const OPEN = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
local ordinal = redis.call('INCR', KEYS[4])
redis.call('ZADD', KEYS[2], ordinal, ARGV[1])
local used = tonumber(redis.call('HGET', KEYS[3], ARGV[3]) or '0')
if tonumber(ARGV[4]) > used then redis.call('HSET', KEYS[3], ARGV[3], ARGV[4]) end
redis.call('ZADD', KEYS[5], ARGV[5], ARGV[6])
return ordinal
`;

/**
 * First answer wins: the interaction leaves the pending set and its answer enters the host's stream
 * in one step, or nothing happens (not pending, or not of the kinds the answer is for).
 * KEYS pending, order, deadlines, answers; ARGV id, comma-separated kinds, decision JSON, deadline member.
 */
const RESOLVE = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
local kind = cjson.decode(raw).kind
if not string.find(',' .. ARGV[2] .. ',', ',' .. kind .. ',', 1, true) then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[4])
return redis.call('XADD', KEYS[4], '*', 'interaction', raw, 'decision', ARGV[3])
`;

/**
 * A vote: its answer enters the host's stream, marked as a vote, and the interaction stays pending
 * (its owner counts the votes and decides with RESOLVE), or nothing happens (not pending, or not of
 * the kinds). KEYS pending, answers; ARGV id, comma-separated kinds, decision JSON.
 */
const VOTE = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
local kind = cjson.decode(raw).kind
if not string.find(',' .. ARGV[2] .. ',', ',' .. kind .. ',', 1, true) then return false end
return redis.call('XADD', KEYS[2], '*', 'interaction', raw, 'decision', ARGV[3], 'vote', '1')
`;

/** Ends an interaction without an answer, unless an answer won first. KEYS pending, order, deadlines; ARGV id, deadline member. */
const WITHDRAW = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[2])
return 1
`;

/** Acknowledges a delivered answer and drops it from the stream: it has reached Tau. KEYS answers; ARGV group, entry id. */
const SETTLE = `
local acked = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
return acked
`;

export interface InteractionScripts {
  tauInteractionOpen(pending: string, order: string, numbers: string, ordinal: string, deadlines: string, ...args: Array<string | number>): Promise<number>;
  tauInteractionResolve(pending: string, order: string, deadlines: string, answers: string, ...args: string[]): Promise<string | null>;
  tauInteractionVote(pending: string, answers: string, ...args: string[]): Promise<string | null>;
  tauInteractionWithdraw(pending: string, order: string, deadlines: string, ...args: string[]): Promise<number>;
  tauInteractionSettle(answers: string, group: string, entryId: string): Promise<number>;
}

/** The client with the scripts defined (ioredis runs them with EVALSHA, loading them when Redis does not know them yet). */
export function withInteractionScripts(client: Redis): Redis & InteractionScripts {
  client.defineCommand("tauInteractionOpen", { numberOfKeys: 5, lua: OPEN });
  client.defineCommand("tauInteractionResolve", { numberOfKeys: 4, lua: RESOLVE });
  client.defineCommand("tauInteractionVote", { numberOfKeys: 2, lua: VOTE });
  client.defineCommand("tauInteractionWithdraw", { numberOfKeys: 3, lua: WITHDRAW });
  client.defineCommand("tauInteractionSettle", { numberOfKeys: 1, lua: SETTLE });
  return client as Redis & InteractionScripts;
}
