/**
 * The Lua scripts that make the store's guarantees atomic: Redis runs a script to the end before
 * anything else, so the fence check, the idempotency check, the seq allocation, the append, the
 * trimming and the publication of one batch can never interleave with another replica's.
 */

/**
 * Appends a batch to a session log. A new log's seqs start at 1; a log that began again after its
 * history was lost (the appender knew an epoch the store no longer has) continues from the time.
 * KEYS: stream, meta (hash: epoch, seq), idem (sorted set: batch key → last seq), host lease.
 * ARGV: lease token ("" = unfenced), batch key, known epoch ("" = none), epoch for a new log, max length,
 *       max age ms (0 = none), now ms, channel, event count, then type and payload JSON per event.
 * Returns {"fenced"} | {"missing"} | {"duplicate", epoch, lastSeq} | {"appended", epoch, firstSeq, lastSeq, newEpoch}: the
 * appender has the events it sent, and numbers them from firstSeq itself (after the reset a new epoch begins with).
 * Publishes `{"epoch":…,"lastSeq":…,"events":[…]}`, epoch and lastSeq first, so that a replica that has the batch
 * already (its own) can tell so from the start of the text without parsing the rest (redis-session-log.ts).
 */
export const APPEND_SCRIPT = `
local stream, meta, idem, lease = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local epoch = redis.call('HGET', meta, 'epoch')
if ARGV[1] == '' then
  -- An unfenced batch (gateway events of a replica that does not hold the lease) never begins a log.
  if not epoch then return {'missing'} end
elseif redis.call('GET', lease) ~= ARGV[1] then
  return {'fenced'}
end
local prior = redis.call('ZSCORE', idem, ARGV[2])
if prior and epoch then return {'duplicate', epoch, prior} end
local newEpoch = 0
if not epoch then
  epoch = ARGV[4]
  redis.call('DEL', stream, idem)
  -- A log that lost its history must not issue its old numbers again (clients de-duplicate by seq):
  -- it continues above any seq it can have issued, from the current time in milliseconds.
  local base = '0'
  if ARGV[3] ~= '' then base = ARGV[7] end
  redis.call('HSET', meta, 'epoch', epoch, 'seq', base)
  newEpoch = 1
end
local now = ARGV[7]
local out = {}
local first, last
local function add(t, p)
  local seq = redis.call('HINCRBY', meta, 'seq', 1)
  redis.call('XADD', stream, seq .. '-0', 't', now, 'type', t, 'payload', p)
  out[#out + 1] = '{"seq":' .. seq .. ',"type":"' .. t .. '","payload":' .. p .. '}'
  if not first then first = seq end
  last = seq
end
-- History the appender knew is gone: the new epoch says so first.
if newEpoch == 1 and ARGV[3] ~= '' then add('session.reset', '{"cause":"resync"}') end
local n = tonumber(ARGV[9])
for i = 0, n - 1 do add(ARGV[10 + 2 * i], ARGV[11 + 2 * i]) end
redis.call('XTRIM', stream, 'MAXLEN', ARGV[5])
local maxAge = tonumber(ARGV[6])
if maxAge > 0 then
  local cutoff = tonumber(now) - maxAge
  -- The oldest entry alone first: reading a hundred entries (payloads and all) on every append
  -- to find them young was most of the script's time.
  local oldest = redis.call('XRANGE', stream, '-', '+', 'COUNT', 1)[1]
  if oldest and tonumber(oldest[2][2]) < cutoff then
    for _, entry in ipairs(redis.call('XRANGE', stream, '-', '+', 'COUNT', 100)) do
      if tonumber(entry[2][2]) >= cutoff then break end
      redis.call('XDEL', stream, entry[1])
    end
  end
  redis.call('PEXPIRE', stream, maxAge)
  redis.call('PEXPIRE', meta, maxAge)
  redis.call('PEXPIRE', idem, maxAge)
end
redis.call('ZADD', idem, last, ARGV[2])
if redis.call('ZCARD', idem) > 1000 then redis.call('ZREMRANGEBYRANK', idem, 0, -1001) end
redis.call('PUBLISH', ARGV[8], '{"epoch":"' .. epoch .. '","lastSeq":' .. last .. ',"events":[' .. table.concat(out, ',') .. ']}')
return {'appended', epoch, first, last, newEpoch}
`;

/**
 * Takes a host's lease when nobody holds it. KEYS: lease, fence counter. ARGV: replica id, ttl ms.
 * Returns the new fence (the counter only ever grows) or 0 when the lease is held.
 */
export const ACQUIRE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local fence = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], fence .. ':' .. ARGV[1], 'PX', ARGV[2])
return fence
`;

/** Extends the lease if this replica still holds it. KEYS: lease. ARGV: token, ttl ms. Returns 1 or 0. */
export const RENEW_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** Gives the lease up if this replica holds it. KEYS: lease. ARGV: token. */
export const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;
