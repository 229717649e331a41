import type { GateAnswer, GateReservation, StockGate } from '../../application/index.js';
import { guarded, type RedisClient } from './redis-connection.js';

/**
 * KEYS: stock, per-user units, reservations by orderId. ARGV: userId, orderId, quantity, perUserLimit.
 * Answers {code, stock}: 0 reserved, -1 sold out, -2 over the user's limit, -3 not loaded.
 * A missing stock key is NOT_LOADED, never 0: `tonumber(false)` is nil. An orderId already recorded (held
 * or restored) answers 0 and changes nothing: a retried call must not take a second unit.
 * The limit check is the domain's rule (`breaksUserLimit`: held + quantity over perUserLimit), written in Lua
 * so that it runs atomically with the decrement; the stock-gate contract holds both gates to it.
 */
const RESERVE = `
local stock = tonumber(redis.call('GET', KEYS[1]))
if stock == nil then return {-3, 0} end
local quantity = tonumber(ARGV[3])
local limit = tonumber(ARGV[4])
if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1 then return {0, stock} end
local held = tonumber(redis.call('HGET', KEYS[2], ARGV[1])) or 0
if held + quantity > limit then return {-2, stock} end
if stock < quantity then return {-1, stock} end
local left = redis.call('DECRBY', KEYS[1], quantity)
redis.call('HINCRBY', KEYS[2], ARGV[1], quantity)
redis.call('HSET', KEYS[3], ARGV[2], 'H:' .. quantity .. ':' .. ARGV[1])
return {0, left}
`;

/**
 * KEYS: stock, per-user units, reservations. ARGV: orderId. Gives a held reservation back once: the entry
 * turns from H (held) to R (restored), so a second restore finds nothing to do. A lost stock key is not
 * re-created from zero; reconciliation rebuilds it.
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
return 1
`;

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
  seckillRestore(stock: string, users: string, orders: string, orderId: string): Promise<number>;
  seckillWarm(stock: string, value: number, force: string): Promise<number>;
  seckillAdjust(stock: string, delta: number): Promise<number | null>;
};

/** Installs the scripts once per client; ioredis sends them by SHA and reloads them after SCRIPT FLUSH. */
const withGateCommands = (client: RedisClient): RedisClient & GateCommands => {
  const c = client as RedisClient & Partial<GateCommands>;
  if (typeof c.seckillReserve !== 'function') {
    client.defineCommand('seckillReserve', { numberOfKeys: 3, lua: RESERVE });
    client.defineCommand('seckillRestore', { numberOfKeys: 3, lua: RESTORE });
    client.defineCommand('seckillWarm', { numberOfKeys: 1, lua: WARM });
    client.defineCommand('seckillAdjust', { numberOfKeys: 1, lua: ADJUST });
  }
  return client as RedisClient & GateCommands;
};

export const GATE_SCRIPTS = { RESERVE, RESTORE, WARM, ADJUST } as const;

/** Every key of one product shares the hash tag {p<id>}, so the scripts run on Redis Cluster too. */
export const gateKeys = (namespace: string, productId: number) => {
  const base = `${namespace}seckill:{p${productId}}`;
  return { stock: `${base}:stock`, users: `${base}:users`, orders: `${base}:orders` };
};

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
    const [code, stockLeft] = await guarded('gate reserve', () =>
      this.redis.seckillReserve(k.stock, k.users, k.orders, r.userId, r.orderId, r.quantity, r.perUserLimit),
    );
    switch (code) {
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

  async restore(productId: number, orderId: string): Promise<boolean> {
    const k = gateKeys(this.namespace, productId);
    return (
      (await guarded('gate restore', () =>
        this.redis.seckillRestore(k.stock, k.users, k.orders, orderId),
      )) === 1
    );
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
