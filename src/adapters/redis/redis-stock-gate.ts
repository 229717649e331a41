import {
  answerFromKey,
  type GateAnswer,
  type GateReservation,
  type KeyClaim,
  type KeyOutcome,
  type StockGate,
} from '../../application/index.js';
import { guarded, type RedisClient } from './redis-connection.js';

/**
 * KEYS: stock, per-user units, reservations by orderId, and the buyer's key (optional). ARGV: userId, orderId,
 * quantity, perUserLimit, key ttl ms. Answers {code, stock[, record]}: 0 reserved, -1 sold out, -2 over the
 * user's limit, -3 not loaded, 1 answered from the key's record.
 * A missing stock key is NOT_LOADED, never 0: `tonumber(false)` is nil. An orderId already recorded (held
 * or restored) answers 0 and changes nothing: a retried call must not take a second unit. A key already
 * recorded answers its record and changes nothing; otherwise the outcome is recorded under it, in this same
 * step, so no repeat of the request can slip in between the decrement and the record
 * (`O:<quantity>:<orderId>`, `S:<quantity>` sold out, `L:<quantity>` over the limit).
 * The limit check is the domain's rule (`breaksUserLimit`: held + quantity over perUserLimit), written in Lua
 * so that it runs atomically with the decrement; the stock-gate contract holds both gates to it.
 */
const RESERVE = `
local stock = tonumber(redis.call('GET', KEYS[1]))
if stock == nil then return {-3, 0} end
local quantity = tonumber(ARGV[3])
local limit = tonumber(ARGV[4])
local keyed = #KEYS == 4
if keyed then
  local recorded = redis.call('GET', KEYS[4])
  if recorded then return {1, stock, recorded} end
end
if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1 then return {0, stock} end
local held = tonumber(redis.call('HGET', KEYS[2], ARGV[1])) or 0
if held + quantity > limit then
  if keyed then redis.call('SET', KEYS[4], 'L:' .. quantity, 'PX', ARGV[5]) end
  return {-2, stock}
end
if stock < quantity then
  if keyed then redis.call('SET', KEYS[4], 'S:' .. quantity, 'PX', ARGV[5]) end
  return {-1, stock}
end
local left = redis.call('DECRBY', KEYS[1], quantity)
redis.call('HINCRBY', KEYS[2], ARGV[1], quantity)
redis.call('HSET', KEYS[3], ARGV[2], 'H:' .. quantity .. ':' .. ARGV[1])
if keyed then redis.call('SET', KEYS[4], 'O:' .. quantity .. ':' .. ARGV[2], 'PX', ARGV[5]) end
return {0, left}
`;

/**
 * KEYS: stock, per-user units, reservations, and the buyer's key (optional). ARGV: orderId. Gives a held
 * reservation back once: the entry turns from H (held) to R (restored), so a second restore finds nothing to
 * do. A lost stock key is not re-created from zero; reconciliation rebuilds it. The key, when given, is
 * forgotten if it holds this reservation.
 */
const RESTORE = `
local entry = redis.call('HGET', KEYS[3], ARGV[1])
if not entry or string.sub(entry, 1, 2) ~= 'H:' then return 0 end
local sep = string.find(entry, ':', 3, true)
local quantity = tonumber(string.sub(entry, 3, sep - 1))
local user = string.sub(entry, sep + 1)
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('INCRBY', KEYS[1], quantity) end
if redis.call('HINCRBY', KEYS[2], user, -quantity) <= 0 then redis.call('HDEL', KEYS[2], user) end
redis.call('HSET', KEYS[3], ARGV[1], 'R:' .. quantity .. ':' .. user)
if #KEYS == 4 and redis.call('GET', KEYS[4]) == 'O:' .. quantity .. ':' .. ARGV[1] then
  redis.call('DEL', KEYS[4])
end
return 1
`;

/** Reads a key's record (`O:<quantity>:<orderId>`, `S:<quantity>`, `L:<quantity>`). */
export const parseKeyRecord = (record: string): KeyOutcome | null => {
  const quantity = Number.parseInt(record.slice(2), 10);
  if (!Number.isSafeInteger(quantity)) return null;
  switch (record[0]) {
    case 'O':
      return { outcome: 'RESERVED', quantity, orderId: record.slice(record.indexOf(':', 2) + 1) };
    case 'S':
      return { outcome: 'SOLD_OUT', quantity };
    case 'L':
      return { outcome: 'LIMIT_EXCEEDED', quantity };
    default:
      return null;
  }
};

/** KEYS: stock. ARGV: stock, force. A live gate is kept: overwriting it would erase decrements. */
const WARM = `
if ARGV[2] ~= '1' and redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
`;

/** KEYS: stock. ARGV: delta. Relative, so concurrent reservations are kept; a missing gate stays missing. */
const ADJUST = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
return redis.call('INCRBY', KEYS[1], ARGV[1])
`;

type GateCommands = {
  seckillReserve(
    stock: string,
    users: string,
    orders: string,
    ...args: (string | number)[]
  ): Promise<[number, number]>;
  seckillReserveKeyed(
    stock: string,
    users: string,
    orders: string,
    key: string,
    ...args: (string | number)[]
  ): Promise<[number, number, string?]>;
  seckillRestore(stock: string, users: string, orders: string, orderId: string): Promise<number>;
  seckillRestoreKeyed(
    stock: string,
    users: string,
    orders: string,
    key: string,
    orderId: string,
  ): Promise<number>;
  seckillWarm(stock: string, value: number, force: string): Promise<number>;
  seckillAdjust(stock: string, delta: number): Promise<number | null>;
};

/** Installs the scripts once per client; ioredis sends them by SHA and reloads them after SCRIPT FLUSH. */
const withGateCommands = (client: RedisClient): RedisClient & GateCommands => {
  const c = client as RedisClient & Partial<GateCommands>;
  if (typeof c.seckillReserve !== 'function') {
    client.defineCommand('seckillReserve', { numberOfKeys: 3, lua: RESERVE });
    client.defineCommand('seckillReserveKeyed', { numberOfKeys: 4, lua: RESERVE });
    client.defineCommand('seckillRestore', { numberOfKeys: 3, lua: RESTORE });
    client.defineCommand('seckillRestoreKeyed', { numberOfKeys: 4, lua: RESTORE });
    client.defineCommand('seckillWarm', { numberOfKeys: 1, lua: WARM });
    client.defineCommand('seckillAdjust', { numberOfKeys: 1, lua: ADJUST });
  }
  return client as RedisClient & GateCommands;
};

export const GATE_SCRIPTS = { RESERVE, RESTORE, WARM, ADJUST } as const;

/**
 * Every key of one product shares the hash tag {p<id>}, so the scripts run on Redis Cluster too; a buyer's
 * Idempotency-Key is recorded there, per product, beside the reservation it made.
 */
export const gateKeys = (namespace: string, productId: number) => {
  const base = `${namespace}seckill:{p${productId}}`;
  return { stock: `${base}:stock`, users: `${base}:users`, orders: `${base}:orders` };
};

/** A buyer's key for one product, in the product's hash tag. */
export const buyerKeyName = (namespace: string, productId: number, userId: string, key: string): string =>
  `${namespace}seckill:{p${productId}}:key:${userId}|${key}`;

/** Where a buyer's key is claimed, whatever the product (one key per command: any slot will do). */
export const claimKeyName = (namespace: string, userId: string, key: string): string =>
  `${namespace}seckill:claim:${userId}|${key}`;

export class RedisStockGate implements StockGate {
  private readonly redis: RedisClient & GateCommands;

  constructor(
    client: RedisClient,
    private readonly namespace = '',
  ) {
    this.redis = withGateCommands(client);
  }

  async warm(
    productId: number,
    stock: number,
    options: { force?: boolean } = {},
  ): Promise<'WARMED' | 'ALREADY_LIVE'> {
    const { stock: key } = gateKeys(this.namespace, productId);
    const set = await guarded('gate warm-up', () =>
      this.redis.seckillWarm(key, stock, options.force ? '1' : '0'),
    );
    return set === 1 ? 'WARMED' : 'ALREADY_LIVE';
  }

  async reserve(r: GateReservation): Promise<GateAnswer> {
    const k = gateKeys(this.namespace, r.productId);
    const args = [r.userId, r.orderId, r.quantity, r.perUserLimit] as const;
    const key = r.idempotency;
    const [code, stockLeft, recorded] = await guarded('gate reserve', () =>
      key
        ? this.redis.seckillReserveKeyed(
            k.stock,
            k.users,
            k.orders,
            buyerKeyName(this.namespace, r.productId, r.userId, key.key),
            ...args,
            key.ttlMs,
          )
        : this.redis.seckillReserve(k.stock, k.users, k.orders, ...args),
    );
    switch (code) {
      case 1: {
        const outcome = parseKeyRecord(recorded ?? '');
        // a record this gate cannot read is no answer: the request is refused rather than served twice
        return outcome ? answerFromKey(outcome, r.quantity, stockLeft) : { ok: false, reason: 'KEY_REUSED' };
      }
      case 0:
        return { ok: true, stockLeft };
      case -1:
        return { ok: false, reason: 'SOLD_OUT', stockLeft };
      case -2:
        return { ok: false, reason: 'LIMIT_EXCEEDED' };
      default:
        return { ok: false, reason: 'NOT_LOADED' };
    }
  }

  async restore(
    productId: number,
    orderId: string,
    forgetKey?: Readonly<{ userId: string; key: string }>,
  ): Promise<boolean> {
    const k = gateKeys(this.namespace, productId);
    return (
      (await guarded('gate restore', () =>
        forgetKey
          ? this.redis.seckillRestoreKeyed(
              k.stock,
              k.users,
              k.orders,
              buyerKeyName(this.namespace, productId, forgetKey.userId, forgetKey.key),
              orderId,
            )
          : this.redis.seckillRestore(k.stock, k.users, k.orders, orderId),
      )) === 1
    );
  }

  async recall(productId: number, userId: string, key: string): Promise<KeyOutcome | null> {
    const name = buyerKeyName(this.namespace, productId, userId, key);
    const record = await guarded('gate key read', () => this.redis.get(name));
    return record === null ? null : parseKeyRecord(record);
  }

  async claimKey(userId: string, key: string, fingerprint: string, ttlMs: number): Promise<KeyClaim> {
    const name = claimKeyName(this.namespace, userId, key);
    // SET NX GET (Redis 7): the claim and the look at an earlier one in one command
    const earlier = (await guarded('key claim', () =>
      this.redis.call('SET', name, fingerprint, 'PX', ttlMs, 'NX', 'GET'),
    )) as string | null;
    if (earlier === null) return 'NEW';
    return earlier === fingerprint ? 'SAME' : 'OTHER';
  }

  async stockLeft(productId: number): Promise<number | null> {
    const value = await guarded('gate read', () => this.redis.get(gateKeys(this.namespace, productId).stock));
    return value === null ? null : Number(value);
  }

  async adjust(productId: number, delta: number): Promise<number | null> {
    const key = gateKeys(this.namespace, productId).stock;
    const value = await guarded('gate adjust', () => this.redis.seckillAdjust(key, delta));
    return value === null ? null : Number(value);
  }

  async held(productId: number): Promise<Map<string, number>> {
    const entries = await guarded('gate held', () =>
      this.redis.hgetall(gateKeys(this.namespace, productId).orders),
    );
    const held = new Map<string, number>();
    for (const [orderId, entry] of Object.entries(entries)) {
      if (!entry.startsWith('H:')) continue;
      held.set(orderId, Number(entry.slice(2, entry.indexOf(':', 2))));
    }
    return held;
  }
}
