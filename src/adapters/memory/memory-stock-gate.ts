import { breaksUserLimit } from '../../domain/index.js';
import type { GateAnswer, GateReservation, StockGate } from '../../application/index.js';

type Held = { userId: string; quantity: number; restored: boolean };
type ProductGate = { stock: number; perUser: Map<string, number>; reservations: Map<string, Held> };

/** The gate of the memory profile: each call runs to completion before another starts, like the Lua script. */
export class MemoryStockGate implements StockGate {
  private readonly gates = new Map<number, ProductGate>();

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
    const gate = this.gates.get(r.productId);
    if (!gate) return Promise.resolve({ ok: false, reason: 'NOT_LOADED' });
    // a retried call: the orderId already took its unit (or gave it back), so it takes nothing again
    if (gate.reservations.has(r.orderId)) return Promise.resolve({ ok: true, stockLeft: gate.stock });
    const already = gate.perUser.get(r.userId) ?? 0;
    if (breaksUserLimit(r.perUserLimit, already + r.quantity))
      return Promise.resolve({ ok: false, reason: 'LIMIT_EXCEEDED' });
    if (gate.stock < r.quantity)
      return Promise.resolve({ ok: false, reason: 'SOLD_OUT', stockLeft: gate.stock });
    gate.stock -= r.quantity;
    gate.perUser.set(r.userId, already + r.quantity);
    gate.reservations.set(r.orderId, { userId: r.userId, quantity: r.quantity, restored: false });
    return Promise.resolve({ ok: true, stockLeft: gate.stock });
  }

  restore(productId: number, orderId: string): Promise<boolean> {
    const gate = this.gates.get(productId);
    const held = gate?.reservations.get(orderId);
    if (!gate || !held || held.restored) return Promise.resolve(false);
    held.restored = true;
    gate.stock += held.quantity;
    gate.perUser.set(held.userId, Math.max(0, (gate.perUser.get(held.userId) ?? 0) - held.quantity));
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
    const held = new Map<string, number>();
    for (const [orderId, h] of this.gates.get(productId)?.reservations ?? [])
      if (!h.restored) held.set(orderId, h.quantity);
    return Promise.resolve(held);
  }

  /** Drops a product's gate, as a Redis that restarted empty would. */
  forget(productId: number): void {
    this.gates.delete(productId);
  }
}
