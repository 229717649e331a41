import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from '@jest/globals';
import { InProcessHistoryFolds } from '../../src/adapters/system/in-process-history-folds.js';
import { ThreadHistoryFolds } from '../../src/adapters/system/thread-history-folds.js';
import type { HistoryFold, HistoryFolds } from '../../src/application/index.js';
import { BUILT_FOLD_THREAD, numbered } from '../support/histories.js';
import { foldAll, historyFoldsContract, unpaidSale } from './history-folds.contract.js';

const BUILT = BUILT_FOLD_THREAD;

historyFoldsContract('InProcessHistoryFolds', () => Promise.resolve(new InProcessHistoryFolds()));
historyFoldsContract('ThreadHistoryFolds', () => Promise.resolve(new ThreadHistoryFolds(BUILT)));

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;

/** The caller's heap after a full collection, with a fold holding `orders` open orders, less before it. */
const heldByCaller = async (folds: HistoryFolds, orders: number): Promise<number> => {
  const history = unpaidSale(orders);
  gc();
  const before = process.memoryUsage().heapUsed;
  const fold: HistoryFold = folds.open();
  try {
    for (let from = 0; from < history.length; from += 1_000)
      await fold.apply(history.slice(from, from + 1_000));
    gc();
    return (process.memoryUsage().heapUsed - before) / MiB;
  } finally {
    await fold.close();
  }
};

describe('ThreadHistoryFolds', () => {
  it("keeps the replay's open orders off the caller's heap, where the in-process fold keeps them", async () => {
    const inProcess = await heldByCaller(new InProcessHistoryFolds(), 50_000);
    const inThread = await heldByCaller(new ThreadHistoryFolds(BUILT), 50_000);

    process.stdout.write(
      `50,000 open orders: ${inProcess.toFixed(1)} MiB held on the caller's heap in process, ${inThread.toFixed(1)} MiB with the thread\n`,
    );
    expect(inProcess).toBeGreaterThan(5);
    expect(inThread).toBeLessThan(2);
  });

  it("refuses the audit with the thread's own failure, and the next fold works", async () => {
    const folds = new ThreadHistoryFolds(BUILT);
    const broken = folds.open();
    try {
      // an event the replay cannot read: the thread throws on it
      await expect(
        broken.apply([{ position: 1, streamId: 'order-x', streamVersion: 1, event: null as never }]),
      ).rejects.toThrow(/reading 'type'/);
      await expect(broken.finish('2030-05-01T10:00:00.000Z', 60_000)).rejects.toThrow(/reading 'type'/);
    } finally {
      await broken.close();
    }

    const outcome = await foldAll(folds, unpaidSale(3));
    expect(outcome.ordersByStatus).toEqual({ RESERVED: 0, COMMITTED: 3 });
  });

  it('refuses the audit when the thread runs out of heap, and the caller goes on', async () => {
    const folds = new ThreadHistoryFolds(BUILT, { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 4 });

    await expect(foldAll(folds, unpaidSale(100_000), { pageSize: 1_000 })).rejects.toMatchObject({
      code: 'ERR_WORKER_OUT_OF_MEMORY',
    });
    const outcome = await foldAll(new ThreadHistoryFolds(BUILT), unpaidSale(3));
    expect(outcome.ordersByStatus).toEqual({ RESERVED: 0, COMMITTED: 3 });
  });

  it('refuses a thread whose script is missing, without hanging the audit', async () => {
    const folds = new ThreadHistoryFolds(new URL('./no-such-thread.js', BUILT));

    await expect(foldAll(folds, numbered([]))).rejects.toThrow(/no-such-thread|Cannot find/);
  });
});
