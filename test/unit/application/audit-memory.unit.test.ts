import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from '@jest/globals';
import { AuditHistory, StockBooksReader } from '../../../src/application/index.js';
import { MemoryDatabase } from '../../../src/adapters/memory/memory-database.js';
import { MemoryUnitOfWork } from '../../../src/adapters/memory/memory-unit-of-work.js';
import { MemoryStockGate } from '../../../src/adapters/memory/memory-stock-gate.js';
import { InProcessHistoryFolds } from '../../../src/adapters/system/in-process-history-folds.js';
import { SystemClock } from '../../../src/adapters/system/system-clock.js';
import { SyntheticHistory } from '../../../scripts/history/synthetic-history.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;

describe('the audit streams the event store', () => {
  it('replays 200,000 events a page at a time with its heap flat, and finds the history clean', async () => {
    const stock = 1_000;
    const samples: Array<{ events: number; heapMiB: number }> = [];
    const marks = [50_000, 100_000, 150_000, 200_000];
    const orders = SyntheticHistory.ordersFor(200_000, stock);
    const history = new SyntheticHistory({ orders, stock, window: 200 }, (position) => {
      if (position < (marks[samples.length] ?? Infinity)) return;
      gc();
      samples.push({ events: position, heapMiB: process.memoryUsage().heapUsed / MiB });
    });
    const db = new MemoryDatabase();
    const audit = new AuditHistory({
      events: history,
      folds: new InProcessHistoryFolds(),
      books: new StockBooksReader({ gate: new MemoryStockGate(), unitOfWork: new MemoryUnitOfWork(db) }),
      clock: new SystemClock(),
      staleAfterMs: 24 * 3_600_000,
      pageSize: 1_000,
    });
    gc();
    const before = process.memoryUsage().heapUsed / MiB;

    const report = await audit.run();

    const growth = (samples.at(-1)?.heapMiB ?? 0) - (samples[0]?.heapMiB ?? 0);
    process.stdout.write(
      `audit heap: ${before.toFixed(1)} MiB before; ${samples
        .map((s) => `${(s.events / 1000).toFixed(0)}k events ${s.heapMiB.toFixed(1)} MiB`)
        .join(', ')}; ${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MiB from the first sample to the last\n`,
    );
    expect(report).toMatchObject({ ok: true, eventsReplayed: history.total });
    expect(history.total).toBeGreaterThanOrEqual(200_000);
    expect(report.orders).toEqual({ PAID: stock / 2, RELEASED: orders - stock / 2 });
    expect(samples).toHaveLength(marks.length);
    // flat: what it holds does not grow with the history (a history kept whole grows ~100 MiB over these)
    expect(growth).toBeLessThan(10);
  });
});
