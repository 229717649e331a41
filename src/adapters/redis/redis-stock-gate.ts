// Every Redis call of the gate in one adapter, so that each script's keys, arguments and answers read together.
import {
  answerFromKey,
  type GateAnswer,
  type GateBudget,
  type GateReservation,
  type GateSnapshot,
  type KeyOutcome,
  type StockGate,
} from '../../application/index.js';
import { guarded, type RedisClient } from './redis-connection.js';
import {
  ABANDON,
  ADJUST,
  RESERVE,
  RESERVED_BY,
  RESTORE,
  SNAPSHOT,
  UNLOCK,
  WARM,
} from './redis-gate-scripts.js';
import { pathTokenKey } from './redis-sale-paths.js';

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

type GateCommands = {
  seckillReserve(...keysThenArgs: (string | number)[]): Promise<[number, number, string?]>;
  seckillRestore(stock: string, users: string, orders: string, orderId: string): Promise<number>;
  seckillRestoreKeyed(
    stock: string,
    users: string,
    orders: string,
    key: string,
    liveKeys: string,
    orderId: string,
  ): Promise<number>;
  seckillUnlock(...keysThenOwners: string[]): Promise<number[]>;
  seckillReservedBy(orders: string, max: number): Promise<string[] | null>;
  seckillWarm(stock: string, value: number, force: string): Promise<number>;
  seckillAdjust(stock: string, delta: number): Promise<number | null>;
  seckillSnapshot(stock: string, orders: string): Promise<[string | null, string[]]>;
  seckillAbandon(
    stock: string,
    users: string,
    orders: string,
    lock: string,
    orderId: string,
    entry: string,
  ): Promise<number>;
};

/** Installs the scripts once per client; ioredis sends them by SHA and reloads them after SCRIPT FLUSH. */
const withGateCommands = (client: RedisClient): RedisClient & GateCommands => {
  const c = client as RedisClient & Partial<GateCommands>;
  if (typeof c.seckillReserve !== 'function') {
    client.defineCommand('seckillReserve', { numberOfKeys: 9, lua: RESERVE });
    client.defineCommand('seckillRestore', { numberOfKeys: 3, lua: RESTORE });
    client.defineCommand('seckillRestoreKeyed', { numberOfKeys: 5, lua: RESTORE });
    // the number of keys comes first in each call: an unlock batch holds as many locks as it holds
    client.defineCommand('seckillUnlock', { lua: UNLOCK });
    client.defineCommand('seckillReservedBy', { numberOfKeys: 1, lua: RESERVED_BY });
    client.defineCommand('seckillWarm', { numberOfKeys: 1, lua: WARM });
    client.defineCommand('seckillAdjust', { numberOfKeys: 1, lua: ADJUST });
    client.defineCommand('seckillSnapshot', { numberOfKeys: 2, lua: SNAPSHOT });
    client.defineCommand('seckillAbandon', { numberOfKeys: 4, lua: ABANDON });
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

/** A buyer's live Idempotency-Keys on one product (a sorted set: key → when it ends). */
const liveKeysName = (base: string, userId: string): string => `${base}:keys:${userId}`;

/** A buyer's duplicate-click lock on one product, in the product's hash tag. */
const lockKeyName = (base: string, userId: string): string => `${base}:lock:${userId}`;

const budgetKeyName = (base: string, budget: GateBudget): string =>
  `${base}:rate:${budget.scope === 'buyer' ? 'u' : 'a'}:${budget.id}`;

/** The order script's keys (`RESERVE`), each in the product's hash tag; `k.unused` where one is not needed. */
const scriptKeys = (
  k: ProductKeys,
  r: GateReservation,
  namespace: string,
  buyerBudget: GateBudget | undefined,
  addressBudget: GateBudget | undefined,
): string[] => {
  const key = r.idempotency;
  return [
    k.stock,
    k.users,
    k.orders,
    lockKeyName(k.base, r.userId),
    key ? `${k.base}:key:${r.userId}|${key.key}` : k.unused,
    buyerBudget ? budgetKeyName(k.base, buyerBudget) : k.unused,
    addressBudget ? budgetKeyName(k.base, addressBudget) : k.unused,
    r.pathToken === undefined ? k.unused : pathTokenKey(namespace, r.productId, r.pathToken),
    key?.maxLive ? liveKeysName(k.base, r.userId) : k.unused,
  ];
};

/** The order script's arguments (`RESERVE`). */
const scriptArgs = (
  r: GateReservation,
  buyerBudget: GateBudget | undefined,
  addressBudget: GateBudget | undefined,
): (string | number)[] => {
  const key = r.idempotency;
  return [
    r.userId,
    r.orderId,
    r.quantity,
    r.perUserLimit,
    key ? key.ttlMs : 0,
    r.lock ? r.lock.leaseMs : 0,
    buyerBudget?.points ?? 0,
    buyerBudget?.windowMs ?? 0,
    addressBudget?.points ?? 0,
    addressBudget?.windowMs ?? 0,
    r.pathToken === undefined ? '0' : '1',
    r.replayOnly ? '1' : '0',
    key?.maxLive ?? 0,
  ];
};

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
    const keys = scriptKeys(k, r, this.namespace, buyerBudget, addressBudget);
    const args = scriptArgs(r, buyerBudget, addressBudget);
    const [code, figure, extra] = await guarded('gate reserve', () =>
      this.redis.seckillReserve(...keys, ...args),
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
      case -8:
        return { ok: false, reason: 'KEYS_EXHAUSTED', retryAfterMs: figure };
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
              liveKeysName(k.base, forgetKey.userId),
              orderId,
            )
          : this.redis.seckillRestore(k.stock, k.users, k.orders, orderId),
      )) === 1
    );
  }

  async abandon(productId: number, orderId: string): Promise<boolean> {
    const k = this.keys(productId);
    // the entry names the buyer, whose lock the script must see: read it, and the script acts only if unchanged
    const entry = await guarded('gate abandon', () => this.redis.hget(k.orders, orderId));
    if (entry === null || !entry.startsWith('H:')) return false;
    const lock = lockKeyName(k.base, entry.slice(entry.indexOf(':', 2) + 1));
    return (
      (await guarded('gate abandon', () =>
        this.redis.seckillAbandon(k.stock, k.users, k.orders, lock, orderId, entry),
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
    for (const [orderId, entry] of Object.entries(entries)) addHeld(held, orderId, entry);
    return held;
  }

  async snapshot(productId: number): Promise<GateSnapshot> {
    const k = this.keys(productId);
    const [stock, entries] = await guarded('gate snapshot', () =>
      this.redis.seckillSnapshot(k.stock, k.orders),
    );
    const held = new Map<string, number>();
    // HGETALL's answer: field, value, field, value…
    for (let i = 0; i + 1 < entries.length; i += 2) addHeld(held, entries[i]!, entries[i + 1]!);
    return { stockLeft: stock === null ? null : Number(stock), held };
  }
}

/** A reservation's entry (`H:<quantity>:<user>` held, `R:…` restored): the held ones, by orderId. */
const addHeld = (held: Map<string, number>, orderId: string, entry: string): void => {
  if (entry.startsWith('H:')) held.set(orderId, Number(entry.slice(2, entry.indexOf(':', 2))));
};
