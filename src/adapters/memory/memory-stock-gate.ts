import { breaksUserLimit } from '../../domain/index.js';
import {
  answerFromKey,
  type GateAnswer,
  type GateReservation,
  type KeyClaim,
  type KeyOutcome,
  type StockGate,
} from '../../application/index.js';

type Held = { userId: string; quantity: number; restored: boolean };
type ProductGate = { stock: number; perUser: Map<string, number>; reservations: Map<string, Held> };
type Expiring<T> = { value: T; expiresAtMs: number };

/** The gate of the memory profile: each call runs to completion before another starts, like the Lua script. */
export class MemoryStockGate implements StockGate {
  private readonly gates = new Map<number, ProductGate>();
  /** buyers' keys by product, then `userId|key` */
  private readonly keys = new Map<number, Map<string, Expiring<KeyOutcome>>>();
  private readonly claims = new Map<string, Expiring<string>>();
  private sweepAt = 1_024;

  /** `nowMs` tells when a key expires (the service's clock, so a test clock moves it) */
  constructor(private readonly nowMs: () => number = Date.now) {}

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
    const gate = this.gates.get(r.productId);
    if (!gate) return { ok: false, reason: 'NOT_LOADED' };
    const keyed = r.idempotency;
    const recorded = keyed ? this.recallNow(r.productId, r.userId, keyed.key) : null;
    if (recorded) return answerFromKey(recorded, r.quantity, gate.stock);
    const record = (outcome: KeyOutcome) => {
      if (keyed)
        this.productKeys(r.productId).set(`${r.userId}|${keyed.key}`, {
          value: outcome,
          expiresAtMs: this.nowMs() + keyed.ttlMs,
        });
    };
    // a retried call: the orderId already took its unit (or gave it back), so it takes nothing again
    if (gate.reservations.has(r.orderId)) return { ok: true, stockLeft: gate.stock };
    const already = gate.perUser.get(r.userId) ?? 0;
    if (breaksUserLimit(r.perUserLimit, already + r.quantity)) {
      record({ outcome: 'LIMIT_EXCEEDED', quantity: r.quantity });
      return { ok: false, reason: 'LIMIT_EXCEEDED' };
    }
    if (gate.stock < r.quantity) {
      record({ outcome: 'SOLD_OUT', quantity: r.quantity });
      return { ok: false, reason: 'SOLD_OUT', stockLeft: gate.stock };
    }
    gate.stock -= r.quantity;
    gate.perUser.set(r.userId, already + r.quantity);
    gate.reservations.set(r.orderId, { userId: r.userId, quantity: r.quantity, restored: false });
    record({ outcome: 'RESERVED', orderId: r.orderId, quantity: r.quantity });
    return { ok: true, stockLeft: gate.stock };
  }

  restore(
    productId: number,
    orderId: string,
    forgetKey?: Readonly<{ userId: string; key: string }>,
  ): Promise<boolean> {
    const gate = this.gates.get(productId);
    const held = gate?.reservations.get(orderId);
    if (!gate || !held || held.restored) return Promise.resolve(false);
    held.restored = true;
    gate.stock += held.quantity;
    gate.perUser.set(held.userId, Math.max(0, (gate.perUser.get(held.userId) ?? 0) - held.quantity));
    if (forgetKey) {
      const name = `${forgetKey.userId}|${forgetKey.key}`;
      const recorded = this.productKeys(productId).get(name)?.value;
      if (recorded?.outcome === 'RESERVED' && recorded.orderId === orderId)
        this.productKeys(productId).delete(name);
    }
    return Promise.resolve(true);
  }

  recall(productId: number, userId: string, key: string): Promise<KeyOutcome | null> {
    return Promise.resolve(this.recallNow(productId, userId, key));
  }

  claimKey(userId: string, key: string, fingerprint: string, ttlMs: number): Promise<KeyClaim> {
    const name = `${userId}|${key}`;
    const earlier = this.claims.get(name);
    if (earlier && earlier.expiresAtMs > this.nowMs())
      return Promise.resolve(earlier.value === fingerprint ? 'SAME' : 'OTHER');
    if (this.claims.size >= this.sweepAt) this.sweep();
    this.claims.set(name, { value: fingerprint, expiresAtMs: this.nowMs() + ttlMs });
    return Promise.resolve('NEW');
  }

  /** Drops expired claims and key records, so that a long sale's keys do not pile up. */
  private sweep(): void {
    const now = this.nowMs();
    for (const [name, claim] of this.claims) if (claim.expiresAtMs <= now) this.claims.delete(name);
    for (const keys of this.keys.values())
      for (const [name, entry] of keys) if (entry.expiresAtMs <= now) keys.delete(name);
    this.sweepAt = Math.max(1_024, this.claims.size * 2);
  }

  private recallNow(productId: number, userId: string, key: string): KeyOutcome | null {
    const keys = this.productKeys(productId);
    const name = `${userId}|${key}`;
    const entry = keys.get(name);
    if (!entry) return null;
    if (entry.expiresAtMs > this.nowMs()) return entry.value;
    keys.delete(name);
    return null;
  }

  private productKeys(productId: number): Map<string, Expiring<KeyOutcome>> {
    let keys = this.keys.get(productId);
    if (!keys) this.keys.set(productId, (keys = new Map<string, Expiring<KeyOutcome>>()));
    return keys;
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
    const held = new Map<string, number>();
    for (const [orderId, h] of this.gates.get(productId)?.reservations ?? [])
      if (!h.restored) held.set(orderId, h.quantity);
    return Promise.resolve(held);
  }

  /** Drops a product's gate, as a Redis that restarted empty would. */
  forget(productId: number): void {
    this.gates.delete(productId);
    this.keys.delete(productId);
  }
}
