import type { Metrics, OrderReadModel } from '../ports/index.js';
import type { PlaceOrderCommand, PlaceOrderResult } from './answers.js';
import type { ReservationJournal } from './reservation-journal.js';

/**
 * The answer to a repeat of a request that reserved (the gate found the reservation under the buyer's key):
 * the same order, with its status now. Its first try may have died between the gate and the commit, so an
 * order MySQL does not have is recorded now, with the unit the gate already holds for it. The buyer's lock is
 * held meanwhile, so two repeats never record it together.
 */
export class KeyReplay {
  constructor(
    private readonly orders: Pick<OrderReadModel, 'get'>,
    private readonly journal: ReservationJournal,
    private readonly metrics: Metrics,
  ) {}

  async answer(cmd: PlaceOrderCommand, orderId: string): Promise<PlaceOrderResult> {
    this.metrics.count('idempotent_replays');
    const existing = await this.orders.get(orderId);
    if (existing) return { ok: true, orderId, status: existing.status, replayed: true };
    this.metrics.count('idempotent_recoveries');
    await this.journal.recordRepeat(cmd, orderId);
    return { ok: true, orderId, status: 'RESERVED', replayed: true };
  }
}
