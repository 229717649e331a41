import {
  DEFAULT_SOLD_OUT_MARK,
  type SoldOutFlags,
  SoldOutMarks,
  type SoldOutMarkOptions,
} from '../../application/index.js';
import { guarded, type RedisClient } from './redis-connection.js';

/**
 * Sold-out marks kept in process, so the flood after the last unit never reaches Redis; a "stock back"
 * message on Redis pub/sub clears them on every instance, and a mark lapses on its own after a short while
 * in case that message was missed.
 */
export class RedisSoldOutFlags implements SoldOutFlags {
  private readonly soldOut: SoldOutMarks;
  private readonly channel: string;
  readonly ready: Promise<unknown>;

  constructor(
    private readonly publisher: RedisClient,
    subscriber: RedisClient,
    namespace = '',
    marks: SoldOutMarkOptions = DEFAULT_SOLD_OUT_MARK,
  ) {
    this.soldOut = new SoldOutMarks(marks.ttlMs, marks.nowMs);
    this.channel = `${namespace}seckill:stock-back`;
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.soldOut.delete(Number(message));
    });
    this.ready = subscriber.subscribe(this.channel);
  }

  isSoldOut(productId: number): boolean {
    return this.soldOut.has(productId);
  }

  markSoldOut(productId: number): void {
    this.soldOut.add(productId);
  }

  markAvailable(productId: number): void {
    this.soldOut.delete(productId);
  }

  async announceStockBack(productId: number): Promise<void> {
    this.soldOut.delete(productId);
    await guarded('stock-back broadcast', () => this.publisher.publish(this.channel, String(productId)));
  }
}
