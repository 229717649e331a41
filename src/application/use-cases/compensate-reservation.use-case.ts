import { parseCompensation } from '../messages.js';
import type { Clock, InboundMessage, Logger, Outbox, SoldOutFlags, StockGate } from '../ports/index.js';

/** The compensation consumer: gives a released reservation back to the gate, once per order. */
export class CompensateReservation {
  constructor(
    private readonly gate: StockGate,
    private readonly soldOut: SoldOutFlags,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  async handle(messages: readonly InboundMessage[]): Promise<void> {
    const stockBack = new Set<number>();
    for (const message of messages) {
      const release = parseCompensation(message);
      if (!release) {
        this.logger.error(
          { offset: message.offset, partition: message.partition },
          'unreadable compensation message skipped',
        );
        continue;
      }
      if (await this.gate.restore(release.productId, release.orderId)) stockBack.add(release.productId);
      await this.outbox.markConsumed(release.messageId, this.clock.now());
    }
    for (const productId of stockBack) await this.soldOut.announceStockBack(productId);
  }
}
