/** The stock gate's Lua scripts (`RedisStockGate` installs them and calls them by SHA). */

/**
 * One order attempt, in one atomic step.
 * KEYS: 1 stock, 2 per-user units, 3 reservations by orderId, 4 the buyer's lock, 5 the buyer's key, 6 the
 * buyer's budget, 7 the address's budget, 8 the path token, 9 the buyer's live keys (a sorted set: key → when
 * it ends). A key whose reservation was abandoned (`X:`: never recorded, given back by reconciliation) is
 * forgotten here, and the request goes on as a new one. ARGV: 1 userId, 2 orderId, 3 quantity, 4 perUserLimit,
 * 5 key ttl ms (0: no key), 6 lock lease ms (0: no lock), 7-8 buyer budget points and window ms (0: off), 9-10 address budget points and window ms
 * (0: off), 11 '1': redeem the path token, 12 '1': answer from the key only, 13 the most live keys a buyer
 * holds on the product (0: no bound).
 * Answers {code, stock or ms[, extra]}: 0 reserved, 1 answered from the key's record (extra: the record),
 * -1 sold out, -2 over the user's limit, -3 not loaded, -4 over a budget (ms until it has room; extra: which),
 * -5 locked (ms left of its lease), -6 path token refused (0 unknown, -1 another buyer's), -7 no record,
 * -8 the buyer holds as many live keys as allowed (ms until the first of them ends).
 * The checks run from the cheapest refusal to the decrement, and everything refused before the key's record
 * leaves no trace but the budgets it spent: no record, no stock taken, no lock, the path token kept.
 * A budget is a fixed window (INCR, its PEXPIRE set by the first call), as rate-limiter-flexible counts.
 * A missing stock key is NOT_LOADED, never 0: `tonumber(false)` is nil. The lock is the seed's
 * `tryLock(0, lease)`: a holder refuses at once; it is taken only by an answer that leaves work to do (a
 * reservation to record, a repeat of one to answer), with the orderId as its owner. An orderId already recorded
 * (held or restored) answers 0 and changes nothing: a retried call must not take a second unit. A key already
 * recorded answers its record and changes nothing; otherwise the outcome is recorded under it, in this same
 * step (`O:<quantity>:<orderId>`, `S:<quantity>` sold out, `L:<quantity>` over the limit). The limit check is
 * the domain's rule (`breaksUserLimit`: held + quantity over perUserLimit), written in Lua so that it runs
 * atomically with the decrement; the stock-gate contract holds both gates to it.
 */
export const RESERVE = `
local function spend(key, points, window)
  local used = redis.call('INCR', key)
  if used == 1 then redis.call('PEXPIRE', key, window) end
  if used <= points then return 0 end
  local wait = redis.call('PTTL', key)
  if wait < 0 then
    redis.call('PEXPIRE', key, window)
    wait = window
  end
  return math.max(wait, 1)
end
local window = tonumber(ARGV[10])
if window > 0 then
  local wait = spend(KEYS[7], tonumber(ARGV[9]), window)
  if wait > 0 then return {-4, wait, 'address'} end
end
window = tonumber(ARGV[8])
if window > 0 then
  local wait = spend(KEYS[6], tonumber(ARGV[7]), window)
  if wait > 0 then return {-4, wait, 'buyer'} end
end
local stock = tonumber(redis.call('GET', KEYS[1]))
if stock == nil then return {-3, 0} end
local lease = tonumber(ARGV[6])
if lease > 0 then
  local left = redis.call('PTTL', KEYS[4])
  if left == -1 then return {-5, lease} end
  if left >= 0 then return {-5, math.max(left, 1)} end
end
local keyed = tonumber(ARGV[5]) > 0
if keyed then
  local recorded = redis.call('GET', KEYS[5])
  local abandoned = false
  if recorded and string.sub(recorded, 1, 2) == 'O:' then
    local entry = redis.call('HGET', KEYS[3], string.sub(recorded, string.find(recorded, ':', 3, true) + 1))
    abandoned = entry ~= false and string.sub(entry, 1, 2) == 'X:'
  end
  if abandoned then
    redis.call('DEL', KEYS[5])
    redis.call('ZREM', KEYS[9], KEYS[5])
  elseif recorded then
    if lease > 0 and string.sub(recorded, 1, 2) == 'O:' then
      redis.call('SET', KEYS[4], ARGV[2], 'PX', lease)
    end
    return {1, stock, recorded}
  end
end
if ARGV[12] == '1' then return {-7, stock} end
local keyEnds = nil
local bound = tonumber(ARGV[13])
if keyed and bound > 0 then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  redis.call('ZREMRANGEBYSCORE', KEYS[9], '-inf', now)
  if redis.call('ZCARD', KEYS[9]) >= bound then
    local first = redis.call('ZRANGE', KEYS[9], 0, 0, 'WITHSCORES')
    return {-8, math.max(tonumber(first[2]) - now, 1)}
  end
  keyEnds = now + tonumber(ARGV[5])
end
local function record(outcome)
  redis.call('SET', KEYS[5], outcome, 'PX', ARGV[5])
  if keyEnds then
    redis.call('ZADD', KEYS[9], keyEnds, KEYS[5])
    redis.call('PEXPIRE', KEYS[9], ARGV[5])
  end
end
if ARGV[11] == '1' then
  local owner = redis.call('GET', KEYS[8])
  if not owner then return {-6, 0} end
  if owner ~= ARGV[1] then return {-6, -1} end
  redis.call('DEL', KEYS[8])
end
if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1 then
  if lease > 0 then redis.call('SET', KEYS[4], ARGV[2], 'PX', lease) end
  return {0, stock}
end
local quantity = tonumber(ARGV[3])
local held = tonumber(redis.call('HGET', KEYS[2], ARGV[1])) or 0
if held + quantity > tonumber(ARGV[4]) then
  if keyed then record('L:' .. quantity) end
  return {-2, stock}
end
if stock < quantity then
  if keyed then record('S:' .. quantity) end
  return {-1, stock}
end
local left = redis.call('DECRBY', KEYS[1], quantity)
redis.call('HINCRBY', KEYS[2], ARGV[1], quantity)
redis.call('HSET', KEYS[3], ARGV[2], 'H:' .. quantity .. ':' .. ARGV[1])
if keyed then record('O:' .. quantity .. ':' .. ARGV[2]) end
if lease > 0 then redis.call('SET', KEYS[4], ARGV[2], 'PX', lease) end
return {0, left}
`;

/**
 * KEYS: buyers' locks on one product. ARGV: their owners, in the same order. Compare-and-delete, each lock by
 * its owner only (a lock whose lease ran out and was taken again is not another's to free). Answers 1 or 0
 * for each.
 */
export const UNLOCK = `
local freed = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i] then
    redis.call('DEL', key)
    freed[i] = 1
  else
    freed[i] = 0
  end
end
return freed
`;

/**
 * KEYS: reservations by orderId. ARGV: the most buyers to answer. The buyers of every reservation, held or
 * restored (`H:` / `R:<quantity>:<user>`), or false when there are more reservations than that.
 */
export const RESERVED_BY = `
if redis.call('HLEN', KEYS[1]) > tonumber(ARGV[1]) then return false end
return redis.call('HVALS', KEYS[1])
`;

/**
 * KEYS: stock, per-user units, reservations, and (optional) the buyer's key and live keys. ARGV: orderId. Gives a held
 * reservation back once: the entry turns from H (held) to R (restored), so a second restore finds nothing to
 * do. A lost stock key is not re-created from zero; reconciliation rebuilds it. The key, when given, is
 * forgotten if it holds this reservation, and no longer counts among the buyer's live keys.
 */
export const RESTORE = `
local entry = redis.call('HGET', KEYS[3], ARGV[1])
if not entry or string.sub(entry, 1, 2) ~= 'H:' then return 0 end
local sep = string.find(entry, ':', 3, true)
local quantity = tonumber(string.sub(entry, 3, sep - 1))
local user = string.sub(entry, sep + 1)
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('INCRBY', KEYS[1], quantity) end
if redis.call('HINCRBY', KEYS[2], user, -quantity) <= 0 then redis.call('HDEL', KEYS[2], user) end
redis.call('HSET', KEYS[3], ARGV[1], 'R:' .. quantity .. ':' .. user)
if #KEYS == 5 and redis.call('GET', KEYS[4]) == 'O:' .. quantity .. ':' .. ARGV[1] then
  redis.call('DEL', KEYS[4])
  redis.call('ZREM', KEYS[5], KEYS[4])
end
return 1
`;

/**
 * KEYS: stock, reservations by orderId. The stock left (false when not loaded) and every reservation's entry, in
 * one atomic read: every unit the stock lacks is held by an entry (`H:`) read with it.
 */
export const SNAPSHOT = `
return {redis.call('GET', KEYS[1]), redis.call('HGETALL', KEYS[2])}
`;

/**
 * KEYS: stock, per-user units, reservations by orderId, the buyer's lock. ARGV: orderId, its held entry as read
 * (`H:<quantity>:<user>`, which names the lock). Gives back a reservation MySQL never recorded: the entry turns
 * from H to X (abandoned), which restore leaves alone and which makes the buyer's key ask afresh. Nothing is done
 * if the entry changed, the stock key is missing, or the buyer's lock is taken.
 */
export const ABANDON = `
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then return 0 end
if redis.call('EXISTS', KEYS[4]) == 1 or redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local sep = string.find(ARGV[2], ':', 3, true)
local quantity = tonumber(string.sub(ARGV[2], 3, sep - 1))
local user = string.sub(ARGV[2], sep + 1)
redis.call('INCRBY', KEYS[1], quantity)
if redis.call('HINCRBY', KEYS[2], user, -quantity) <= 0 then redis.call('HDEL', KEYS[2], user) end
redis.call('HSET', KEYS[3], ARGV[1], 'X' .. string.sub(ARGV[2], 2))
return 1
`;

/** KEYS: stock. ARGV: stock, force. A live gate is kept: overwriting it would erase decrements. */
export const WARM = `
if ARGV[2] ~= '1' and redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
`;

/** KEYS: stock. ARGV: delta. Relative, so concurrent reservations are kept; a missing gate stays missing. */
export const ADJUST = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
return redis.call('INCRBY', KEYS[1], ARGV[1])
`;
