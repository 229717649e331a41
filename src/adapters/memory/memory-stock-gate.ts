// The memory profile's gate in one class, step for step with the Lua scripts it stands in for, each call atomic as they are.
import { breaksUserLimit } from '../../domain/index.js';
import {
  answerFromKey,
  type GateAnswer,
  type GateBudget,
  type GateReservation,
  type GateSnapshot,
  type KeyOutcome,
  type StockGate,
} from '../../application/index.js';
import type { MemorySalePaths } from './memory-sale-paths.js';

/** `restored`: given back (by restore or abandon); `abandoned`: given back as never recorded (see abandon) */
type Held = { userId: string; quantity: number; restored: boolean; abandoned?: boolean };
type Expiring<T> = { value: T; expiresAtMs: number };
type ProductGate = {
  stock: number;
  perUser: Map<string, number>;
  reservations: Map<string, Held>;
};
/** What belongs to a buyer on a product (keys, budgets, locks), by `userId|key`, `u|id` / `a|id`, userId. */
type Buyers = {
  keys: Map<string, Expiring<KeyOutcome>>;
  /** each buyer's live keys, in the order they end: key → when */
  liveKeys: Map<string, Map<string, number>>;
  budgets: Map<string, Expiring<number>>;
  locks: Map<string, Expiring<string>>;
};

/** Entries past their time are swept once a product's maps hold this many more than after the last sweep. */
const SWEEP_EVERY = 1_024;

/**
 * The gate of the memory profile: each call runs to completion before another starts, like the Lua script,
 * and keeps to the same order of checks. Keys, budgets and locks expire by the service's clock (a test moves it).
 */
export class MemoryStockGate implements StockGate {
  private readonly gates = new Map<number, ProductGate>();
  private readonly buyers = new Map<number, Buyers>();
  private entries = 0;
  private sweepAt = SWEEP_EVERY;

  /**
   * `nowMs` tells when a key, a budget's window or a lock's lease ends; `salePaths` holds the path tokens an
   * attempt uses up (none: every token is unknown).
   */
  constructor(
    private readonly nowMs: () => number = Date.now,
    private readonly salePaths: MemorySalePaths | null = null,
  ) {}

  warm(
    productId: number,
    stock: number,
    options: { force?: boolean } = {},
  ): Promise<'WARMED' | 'ALREADY_LIVE'> {
    const live = this.gates.get(productId);
    if (live && !options.force) return Promise.resolve('ALREADY_LIVE');
    this.gates.set(productId, {
      stock,
      perUser: live?.perUser ?? new Map<string, number>(),
      reservations: live?.reservations ?? new Map<string, Held>(),
    });
    return Promise.resolve('WARMED');
  }

  reserve(r: GateReservation): Promise<GateAnswer> {
    return Promise.resolve(this.reserveNow(r));
  }

  private reserveNow(r: GateReservation): GateAnswer {
    const now = this.nowMs();
    const buyers = this.buyersOf(r.productId);
    const overBudget = this.spendAll(buyers, r, now);
    if (overBudget) return overBudget;
    const gate = this.gates.get(r.productId);
    if (!gate) return { ok: false, reason: 'NOT_LOADED' };
    const lock = buyers.locks.get(r.userId);
    if (r.lock && lock && lock.expiresAtMs > now)
      return { ok: false, reason: 'LOCKED', retryAfterMs: Math.max(1, lock.expiresAtMs - now) };
    const keyed = r.idempotency;
    const byKey = this.answerByKey(buyers, gate, r, now);
    if (byKey) return byKey;
    const pathRefused = this.redeem(r);
    if (pathRefused) return pathRefused;
    const answer = this.take(gate, r);
    if (keyed && 'outcome' in answer) {
      this.put(buyers.keys, `${r.userId}|${keyed.key}`, answer.outcome, now + keyed.ttlMs);
      if (keyed.maxLive) this.liveKeysOf(buyers, r.userId).set(keyed.key, now + keyed.ttlMs);
    }
    if (answer.answer.ok) this.takeLock(buyers, r, now);
    return answer.answer;
  }

  /** The limit, the stock and the decrement; what a key would record of it. */
  private take(
    gate: ProductGate,
    r: GateReservation,
  ): Readonly<{ answer: GateAnswer; outcome?: KeyOutcome }> {
    // a retried call: the orderId already took its unit (or gave it back), so it takes nothing again
    if (gate.reservations.has(r.orderId)) return { answer: { ok: true, stockLeft: gate.stock } };
    const already = gate.perUser.get(r.userId) ?? 0;
    if (breaksUserLimit(r.perUserLimit, already + r.quantity))
      return {
        answer: { ok: false, reason: 'LIMIT_EXCEEDED' },
        outcome: { outcome: 'LIMIT_EXCEEDED', quantity: r.quantity },
      };
    if (gate.stock < r.quantity)
      return {
        answer: { ok: false, reason: 'SOLD_OUT', stockLeft: gate.stock },
        outcome: { outcome: 'SOLD_OUT', quantity: r.quantity },
      };
    gate.stock -= r.quantity;
    gate.perUser.set(r.userId, already + r.quantity);
    gate.reservations.set(r.orderId, { userId: r.userId, quantity: r.quantity, restored: false });
    return {
      answer: { ok: true, stockLeft: gate.stock },
      outcome: { outcome: 'RESERVED', orderId: r.orderId, quantity: r.quantity },
    };
  }

  /** The key's record answers a repeat; a replay without one, or a key past the buyer's bound, is refused. */
  private answerByKey(buyers: Buyers, gate: ProductGate, r: GateReservation, now: number): GateAnswer | null {
    const keyed = r.idempotency;
    const name = keyed ? `${r.userId}|${keyed.key}` : '';
    let recorded = keyed ? live(buyers.keys.get(name), now) : undefined;
    if (recorded?.outcome === 'RESERVED' && gate.reservations.get(recorded.orderId)?.abandoned) {
      // its reservation was never recorded and was given back: the request goes on as a new one
      buyers.keys.delete(name);
      buyers.liveKeys.get(r.userId)?.delete(keyed!.key);
      recorded = undefined;
    }
    if (recorded) {
      if (recorded.outcome === 'RESERVED') this.takeLock(buyers, r, now);
      return answerFromKey(recorded, r.quantity, gate.stock);
    }
    if (r.replayOnly) return { ok: false, reason: 'NOT_RECORDED' };
    return keyed?.maxLive ? this.keysExhausted(buyers, r.userId, keyed.maxLive, now) : null;
  }

  /** KEYS_EXHAUSTED when the buyer holds `maxLive` keys that have not ended; the ended ones are dropped. */
  private keysExhausted(buyers: Buyers, userId: string, maxLive: number, now: number): GateAnswer | null {
    const live = buyers.liveKeys.get(userId);
    if (!live) return null;
    for (const [key, endsAt] of live) {
      if (endsAt > now) break;
      live.delete(key);
    }
    if (live.size === 0) buyers.liveKeys.delete(userId);
    if (live.size < maxLive) return null;
    const first = live.values().next();
    return { ok: false, reason: 'KEYS_EXHAUSTED', retryAfterMs: Math.max(1, (first.value ?? now) - now) };
  }

  private liveKeysOf(buyers: Buyers, userId: string): Map<string, number> {
    let live = buyers.liveKeys.get(userId);
    if (!live) buyers.liveKeys.set(userId, (live = new Map<string, number>()));
    return live;
  }

  private takeLock(buyers: Buyers, r: GateReservation, now: number): void {
    if (r.lock) this.put(buyers.locks, r.userId, r.orderId, now + r.lock.leaseMs);
  }

  private redeem(r: GateReservation): GateAnswer | null {
    if (r.pathToken === undefined) return null;
    const redemption = this.salePaths?.redeemNow(r.pathToken, r.userId, r.productId) ?? 'UNKNOWN';
    return redemption === 'REDEEMED' ? null : { ok: false, reason: 'PATH_TOKEN_INVALID', redemption };
  }

  private spendAll(buyers: Buyers, r: GateReservation, now: number): GateAnswer | null {
    for (const budget of r.budgets ?? []) {
      const waitMs = this.spend(buyers, budget, now);
      if (waitMs > 0) return { ok: false, reason: 'RATE_LIMITED', scope: budget.scope, retryAfterMs: waitMs };
    }
    return null;
  }

  /** A fixed window, as the script counts: 0 when the attempt fits, else the ms until the window ends. */
  private spend(buyers: Buyers, budget: GateBudget, now: number): number {
    const name = `${budget.scope === 'buyer' ? 'u' : 'a'}|${budget.id}`;
    const window = buyers.budgets.get(name);
    if (!window || window.expiresAtMs <= now) {
      this.put(buyers.budgets, name, 1, now + budget.windowMs);
      return 0;
    }
    window.value += 1;
    return window.value <= budget.points ? 0 : Math.max(1, window.expiresAtMs - now);
  }

  unlock(productId: number, userId: string, owner: string): Promise<boolean> {
    const locks = this.buyers.get(productId)?.locks;
    const lock = locks?.get(userId);
    if (!locks || !lock || lock.value !== owner || lock.expiresAtMs <= this.nowMs())
      return Promise.resolve(false);
    locks.delete(userId);
    return Promise.resolve(true);
  }

  reservedBy(productId: number, max: number): Promise<ReadonlySet<string> | null> {
    const reservations = this.gates.get(productId)?.reservations;
    if (!reservations) return Promise.resolve(new Set());
    if (reservations.size > max) return Promise.resolve(null);
    return Promise.resolve(new Set([...reservations.values()].map((held) => held.userId)));
  }

  restore(
    productId: number,
    orderId: string,
    forgetKey?: Readonly<{ userId: string; key: string }>,
  ): Promise<boolean> {
    const gate = this.gates.get(productId);
    const held = gate?.reservations.get(orderId);
    if (!gate || !held || held.restored) return Promise.resolve(false);
    giveBack(gate, held);
    if (forgetKey) {
      const keys = this.buyersOf(productId).keys;
      const name = `${forgetKey.userId}|${forgetKey.key}`;
      const recorded = keys.get(name)?.value;
      if (recorded?.outcome === 'RESERVED' && recorded.orderId === orderId) {
        keys.delete(name);
        this.buyersOf(productId).liveKeys.get(forgetKey.userId)?.delete(forgetKey.key);
      }
    }
    return Promise.resolve(true);
  }

  abandon(productId: number, orderId: string): Promise<boolean> {
    const gate = this.gates.get(productId);
    const held = gate?.reservations.get(orderId);
    if (!gate || !held || held.restored) return Promise.resolve(false);
    const lock = this.buyers.get(productId)?.locks.get(held.userId);
    if (lock && lock.expiresAtMs > this.nowMs()) return Promise.resolve(false);
    giveBack(gate, held);
    held.abandoned = true;
    return Promise.resolve(true);
  }

  stockLeft(productId: number): Promise<number | null> {
    return Promise.resolve(this.gates.get(productId)?.stock ?? null);
  }

  adjust(productId: number, delta: number): Promise<number | null> {
    const gate = this.gates.get(productId);
    if (!gate) return Promise.resolve(null);
    gate.stock += delta;
    return Promise.resolve(gate.stock);
  }

  held(productId: number): Promise<Map<string, number>> {
    return Promise.resolve(this.heldNow(productId));
  }

  snapshot(productId: number): Promise<GateSnapshot> {
    return Promise.resolve({
      stockLeft: this.gates.get(productId)?.stock ?? null,
      held: this.heldNow(productId),
    });
  }

  private heldNow(productId: number): Map<string, number> {
    const held = new Map<string, number>();
    for (const [orderId, h] of this.gates.get(productId)?.reservations ?? [])
      if (!h.restored) held.set(orderId, h.quantity);
    return held;
  }

  /** Drops a product's gate, as a Redis that restarted empty would. */
  forget(productId: number): void {
    this.gates.delete(productId);
    this.buyers.delete(productId);
  }

  private buyersOf(productId: number): Buyers {
    let buyers = this.buyers.get(productId);
    if (!buyers) {
      buyers = { keys: new Map(), liveKeys: new Map(), budgets: new Map(), locks: new Map() };
      this.buyers.set(productId, buyers);
    }
    return buyers;
  }

  private put<T>(map: Map<string, Expiring<T>>, name: string, value: T, expiresAtMs: number): void {
    if (!map.has(name) && (this.entries += 1) >= this.sweepAt) this.sweep();
    map.set(name, { value, expiresAtMs });
  }

  /** Drops what has expired, so that a long sale's keys, windows and locks do not pile up. */
  private sweep(): void {
    const now = this.nowMs();
    let kept = 0;
    for (const buyers of this.buyers.values())
      for (const map of [buyers.keys, buyers.budgets, buyers.locks] as Map<string, Expiring<unknown>>[]) {
        for (const [name, entry] of map) if (entry.expiresAtMs <= now) map.delete(name);
        kept += map.size;
      }
    for (const buyers of this.buyers.values())
      for (const [userId, live] of buyers.liveKeys) {
        for (const [key, endsAt] of live) if (endsAt <= now) live.delete(key);
        if (live.size === 0) buyers.liveKeys.delete(userId);
      }
    this.entries = kept;
    this.sweepAt = Math.max(SWEEP_EVERY, kept * 2);
  }
}

const live = <T>(entry: Expiring<T> | undefined, now: number): T | undefined =>
  entry && entry.expiresAtMs > now ? entry.value : undefined;

/** A held reservation's unit and the buyer's count, back to the gate (restore and abandon alike). */
const giveBack = (gate: ProductGate, held: Held): void => {
  held.restored = true;
  gate.stock += held.quantity;
  gate.perUser.set(held.userId, Math.max(0, (gate.perUser.get(held.userId) ?? 0) - held.quantity));
};
