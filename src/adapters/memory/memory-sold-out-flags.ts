import { EventEmitter } from 'node:events';
import {
  DEFAULT_SOLD_OUT_MARK,
  type SoldOutFlags,
  SoldOutMarks,
  type SoldOutMarkOptions,
} from '../../application/index.js';

/** Stands in for Redis pub/sub between instances that share one process. */
export class MemoryStockBackChannel extends EventEmitter<{ stockBack: [number] }> {}

export class MemorySoldOutFlags implements SoldOutFlags {
  private readonly soldOut: SoldOutMarks;

  constructor(
    private readonly channel: MemoryStockBackChannel = new MemoryStockBackChannel(),
    marks: SoldOutMarkOptions = DEFAULT_SOLD_OUT_MARK,
  ) {
    this.soldOut = new SoldOutMarks(marks.ttlMs, marks.nowMs);
    channel.on('stockBack', (productId) => this.soldOut.delete(productId));
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

  announceStockBack(productId: number): Promise<void> {
    this.channel.emit('stockBack', productId);
    return Promise.resolve();
  }
}
