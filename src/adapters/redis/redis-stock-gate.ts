import {
  answerFromKey,
  type GateAnswer,
  type GateBudget,
  type GateReservation,
  type KeyOutcome,
  type StockGate,
} from '../../application/index.js';
import { guarded, type RedisClient } from './redis-connection.js';
import { pathTokenKey } from './redis-sale-paths.js';

/**
 * One order attempt, in one atomic step.
 * KEYS: 1 stock, 2 per-user units, 3 reservations by orderId, 4 the buyer's lock, 5 the buyer's key, 6 the
 * buyer's budget, 7 the address's budget, 8 the path token. ARGV: 1 userId, 2 orderId, 3 quantity,
 * 4 perUserLimit, 5 key ttl ms (0: no key), 6 lock lease ms (0: no lock), 7-8 buyer budget points and window
 * ms (0: off), 9-10 address budget points and window ms (0: off), 11 '1': redeem the path token, 12 '1': answer
 * from the key only.
 * Answers {code, stock or ms[, extra]}: 0 reserved, 1 answered from the key's record (extra: the record),
 * -1 sold out, -2 over the user's limit, -3 not loaded, -4 over a budget (ms until it has room; extra: which),
 * -5 locked (ms left of its lease), -6 path token refused (0 unknown, -1 another buyer's), -7 no record.
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
const RESERVE = `
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
  if recorded then
    if lease > 0 and string.sub(recorded, 1, 2) == 'O:' then
      redis.call('SET', KEYS[4], ARGV[2], 'PX', lease)
    end
    return {1, stock, recorded}
  end
end
if ARGV[12] == '1' then return {-7, stock} end
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
  if keyed then redis.call('SET', KEYS[5], 'L:' .. quantity, 'PX', ARGV[5]) end
  return {-2, stock}
end
if stock < quantity then
  if keyed then redis.call('SET', KEYS[5], 'S:' .. quantity, 'PX', ARGV[5]) end
  return {-1, stock}
end
local left = redis.call('DECRBY', KEYS[1], quantity)
redis.call('HINCRBY', KEYS[2], ARGV[1], quantity)
redis.call('HSET', KEYS[3], ARGV[2], 'H:' .. quantity .. ':' .. ARGV[1])
if keyed then redis.call('SET', KEYS[5], 'O:' .. quantity .. ':' .. ARGV[2], 'PX', ARGV[5]) end
if lease > 0 then redis.call('SET', KEYS[4], ARGV[2], 'PX', lease) end
return {0, left}
`;

/**
 * KEYS: buyers' locks on one product. ARGV: their owners, in the same order. Compare-and-delete, each lock by
 * its owner only (a lock whose lease ran out and was taken again is not another's to free). Answers 1 or 0
 * for each.
 */
const UNLOCK = `
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
const RESERVED_BY = `
if redis.call('HLEN', KEYS[1]) > tonumber(ARGV[1]) then return false end
return redis.call('HVALS', KEYS[1])
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
const parseKeyRecord = (record: string): KeyOutcome | null => {
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
  seckillReserve(...keysThenArgs: (string | number)[]): Promise<[number, number, string?]>;
  seckillRestore(stock: string, users: string, orders: string, orderId: string): Promise<number>;
  seckillRestoreKeyed(
    stock: string,
    users: string,
    orders: string,
    key: string,
    orderId: string,
  ): Promise<number>;
  seckillUnlock(...keysThenOwners: string[]): Promise<number[]>;
  seckillReservedBy(orders: string, max: number): Promise<string[] | null>;
  seckillWarm(stock: string, value: number, force: string): Promise<number>;
  seckillAdjust(stock: string, delta: number): Promise<number | null>;
};

/** Installs the scripts once per client; ioredis sends them by SHA and reloads them after SCRIPT FLUSH. */
const withGateCommands = (client: RedisClient): RedisClient & GateCommands => {
  const c = client as RedisClient & Partial<GateCommands>;
  if (typeof c.seckillReserve !== 'function') {
    client.defineCommand('seckillReserve', { numberOfKeys: 8, lua: RESERVE });
    client.defineCommand('seckillRestore', { numberOfKeys: 3, lua: RESTORE });
    client.defineCommand('seckillRestoreKeyed', { numberOfKeys: 4, lua: RESTORE });
    // the number of keys comes first in each call: an unlock batch holds as many locks as it holds
    client.defineCommand('seckillUnlock', { lua: UNLOCK });
    client.defineCommand('seckillReservedBy', { numberOfKeys: 1, lua: RESERVED_BY });
    client.defineCommand('seckillWarm', { numberOfKeys: 1, lua: WARM });
    client.defineCommand('seckillAdjust', { numberOfKeys: 1, lua: ADJUST });
  }
  return client as RedisClient & GateCommands;
};

export const GATE_SCRIPTS = { RESERVE, RESTORE, UNLOCK, WARM, ADJUST } as const;

/**
 * Every key of one product shares the hash tag {p<id>}, so the scripts run on Redis Cluster too: its stock,
 * reservations and buyers, and what belongs to a buyer on it (lock, Idempotency-Key, budget, path tokens).
 */
export const gateKeys = (namespace: string, productId: number) => {
  const base = `${namespace}seckill:{p${productId}}`;
  return {
    base,
    stock: `${base}:stock`,
    users: `${base}:users`,
    orders: `${base}:orders`,
    /** a key the order script is given in a place it leaves alone (no key, no budget, no token) */
    unused: `${base}:-`,
  };
};

type ProductKeys = ReturnType<typeof gateKeys>;

/** A buyer's duplicate-click lock on one product, in the product's hash tag. */
const lockKeyName = (base: string, userId: string): string => `${base}:lock:${userId}`;

const budgetKeyName = (base: string, budget: GateBudget): string =>
  `${base}:rate:${budget.scope === 'buyer' ? 'u' : 'a'}:${budget.id}`;

/** How many products' key names are kept built; past it the names are built afresh. */
const KEY_NAMES_KEPT = 1_024;

type PendingUnlock = {
  userId: string;
  owner: string;
  resolve: (freed: boolean) => void;
  reject: (e: unknown) => void;
};

export class RedisStockGate implements StockGate {
  private readonly redis: RedisClient & GateCommands;
  private readonly keyNames = new Map<number, ProductKeys>();
  /** unlocks asked in this turn of the event loop, by product: one script call per product frees them */
  private unlocks = new Map<number, PendingUnlock[]>();
  private unlocksScheduled = false;

  constructor(
    client: RedisClient,
    private readonly namespace = '',
  ) {
    this.redis = withGateCommands(client);
  }

  private keys(productId: number): ProductKeys {
    let keys = this.keyNames.get(productId);
    if (keys) return keys;
    keys = gateKeys(this.namespace, productId);
    if (this.keyNames.size < KEY_NAMES_KEPT) this.keyNames.set(productId, keys);
    return keys;
  }

  async warm(
    productId: number,
    stock: number,
    options: { force?: boolean } = {},
  ): Promise<'WARMED' | 'ALREADY_LIVE'> {
    const { stock: key } = this.keys(productId);
    const set = await guarded('gate warm-up', () =>
      this.redis.seckillWarm(key, stock, options.force ? '1' : '0'),
    );
    return set === 1 ? 'WARMED' : 'ALREADY_LIVE';
  }

  async reserve(r: GateReservation): Promise<GateAnswer> {
    const k = this.keys(r.productId);
    let buyerBudget: GateBudget | undefined;
    let addressBudget: GateBudget | undefined;
    for (const budget of r.budgets ?? [])
      if (budget.scope === 'buyer') buyerBudget = budget;
      else addressBudget = budget;
    const key = r.idempotency;
    const [code, figure, extra] = await guarded('gate reserve', () =>
      this.redis.seckillReserve(
        k.stock,
        k.users,
        k.orders,
        lockKeyName(k.base, r.userId),
        key ? `${k.base}:key:${r.userId}|${key.key}` : k.unused,
        buyerBudget ? budgetKeyName(k.base, buyerBudget) : k.unused,
        addressBudget ? budgetKeyName(k.base, addressBudget) : k.unused,
        r.pathToken === undefined ? k.unused : pathTokenKey(this.namespace, r.productId, r.pathToken),
        r.userId,
        r.orderId,
        r.quantity,
        r.perUserLimit,
        key ? key.ttlMs : 0,
        r.lock ? r.lock.leaseMs : 0,
        buyerBudget ? buyerBudget.points : 0,
        buyerBudget ? buyerBudget.windowMs : 0,
        addressBudget ? addressBudget.points : 0,
        addressBudget ? addressBudget.windowMs : 0,
        r.pathToken === undefined ? '0' : '1',
        r.replayOnly ? '1' : '0',
      ),
    );
    return this.answer(r, code, figure, extra);
  }

  private answer(r: GateReservation, code: number, figure: number, extra: string | undefined): GateAnswer {
    switch (code) {
      case 0:
        return { ok: true, stockLeft: figure };
      case 1: {
        const outcome = parseKeyRecord(extra ?? '');
        // a record this gate cannot read is no answer: the request is refused rather than served twice
        return outcome ? answerFromKey(outcome, r.quantity, figure) : { ok: false, reason: 'KEY_REUSED' };
      }
      case -1:
        return { ok: false, reason: 'SOLD_OUT', stockLeft: figure };
      case -2:
        return { ok: false, reason: 'LIMIT_EXCEEDED' };
      case -4:
        return {
          ok: false,
          reason: 'RATE_LIMITED',
          scope: extra === 'address' ? 'address' : 'buyer',
          retryAfterMs: figure,
        };
      case -5:
        return { ok: false, reason: 'LOCKED', retryAfterMs: figure };
      case -6:
        return {
          ok: false,
          reason: 'PATH_TOKEN_INVALID',
          redemption: figure === 0 ? 'UNKNOWN' : 'NOT_YOURS',
        };
      case -7:
        return { ok: false, reason: 'NOT_RECORDED' };
      default:
        return { ok: false, reason: 'NOT_LOADED' };
    }
  }

  unlock(productId: number, userId: string, owner: string): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      let pending = this.unlocks.get(productId);
      if (!pending) this.unlocks.set(productId, (pending = []));
      pending.push({ userId, owner, resolve, reject });
      if (!this.unlocksScheduled) {
        this.unlocksScheduled = true;
        // the next turn of the event loop: after the answers of this one have been written
        setImmediate(() => this.sendUnlocks());
      }
    });
  }

  private sendUnlocks(): void {
    const batches = this.unlocks;
    this.unlocks = new Map();
    this.unlocksScheduled = false;
    for (const [productId, pending] of batches) {
      const base = this.keys(productId).base;
      const args: (string | number)[] = [pending.length];
      for (const p of pending) args.push(lockKeyName(base, p.userId));
      for (const p of pending) args.push(p.owner);
      guarded('unlock', () => this.redis.seckillUnlock(...(args as string[]))).then(
        (freed) => pending.forEach((p, i) => p.resolve(freed[i] === 1)),
        (error: unknown) => pending.forEach((p) => p.reject(error)),
      );
    }
  }

  async reservedBy(productId: number, max: number): Promise<ReadonlySet<string> | null> {
    const entries = await guarded('gate buyers', () =>
      this.redis.seckillReservedBy(this.keys(productId).orders, max),
    );
    if (entries === null) return null;
    // `H:<quantity>:<user>` or `R:<quantity>:<user>`
    return new Set(entries.map((entry) => entry.slice(entry.indexOf(':', 2) + 1)));
  }

  async restore(
    productId: number,
    orderId: string,
    forgetKey?: Readonly<{ userId: string; key: string }>,
  ): Promise<boolean> {
    const k = this.keys(productId);
    return (
      (await guarded('gate restore', () =>
        forgetKey
          ? this.redis.seckillRestoreKeyed(
              k.stock,
              k.users,
              k.orders,
              `${k.base}:key:${forgetKey.userId}|${forgetKey.key}`,
              orderId,
            )
          : this.redis.seckillRestore(k.stock, k.users, k.orders, orderId),
      )) === 1
    );
  }

  async stockLeft(productId: number): Promise<number | null> {
    const value = await guarded('gate read', () => this.redis.get(this.keys(productId).stock));
    return value === null ? null : Number(value);
  }

  async adjust(productId: number, delta: number): Promise<number | null> {
    const key = this.keys(productId).stock;
    const value = await guarded('gate adjust', () => this.redis.seckillAdjust(key, delta));
    return value === null ? null : Number(value);
  }

  async held(productId: number): Promise<Map<string, number>> {
    const entries = await guarded('gate held', () => this.redis.hgetall(this.keys(productId).orders));
    const held = new Map<string, number>();
    for (const [orderId, entry] of Object.entries(entries)) {
      if (!entry.startsWith('H:')) continue;
      held.set(orderId, Number(entry.slice(2, entry.indexOf(':', 2))));
    }
    return held;
  }
}
