import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { expectBooksAgree, expectEachOrderDecidedOnce } from '../support/books.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient } from '../support/e2e-service.js';
import { runFlood } from '../support/flood.js';
import { startWorker, type WorkerProcess } from '../support/processes.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';
import { drained } from '../support/drained.js';

describe('drill: a worker killed with SIGKILL in the middle of its batches', () => {
  let stack: RealStack;
  let api: SeckillService;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    // small batches: the worker is killed with many of them still to come
    stack = await createRealStack({
      SECKILL_KAFKA_MAX_BYTES_PER_PARTITION: '2048',
      SECKILL_KAFKA_CONCURRENCY: '1',
    });
    api = await stack.start({ http: true, worker: false });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await stack.stop();
  });

  it('loses nothing and decides nothing twice once another worker takes over', async () => {
    const client = new ApiClient(api.url, TEST_SECRET);
    const products = [
      await client.listProduct({ name: 'A', stock: 80, perUserLimit: 1, maxPerOrder: 1 }),
      await client.listProduct({ name: 'B', stock: 80, perUserLimit: 1, maxPerOrder: 1 }),
    ];
    // the orders are reserved first, with no worker running: a backlog for the worker to chew on
    const floods = await Promise.all(
      products.map((productId, i) =>
        runFlood(client, { productId, buyers: 120, concurrency: 16, seed: 40 + i }),
      ),
    );
    for (const flood of floods) expect(flood.accepted).toHaveLength(80);

    const victim = startWorker(stack.env);
    workers.push(victim);
    await eventually(
      () => expect(victim.lines.some((l) => l['msg'] === 'batch handled')).toBe(true),
      60_000,
      5,
    );
    victim.child.kill('SIGKILL');
    await new Promise((resolve) => victim.child.once('exit', resolve));
    // the drill only means something if the kill left work behind for the next worker
    const undecidedAtKill = (await Promise.all(floods.map((f) => f.decide()))).reduce(
      (n, d) => n + d.undecided,
      0,
    );
    expect(undecidedAtKill).toBeGreaterThan(0);

    workers.push(startWorker(stack.env));
    await drained(api, 120_000);

    for (const flood of floods)
      expect(await flood.decide()).toEqual({ sold: 80, undecided: 0, maxUnitsPerBuyer: 1, released: {} });
    await expectEachOrderDecidedOnce(stack.db, 160);
    await expectBooksAgree(client, products);
  });
});
