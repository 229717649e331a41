import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConsumerGroups, Topics } from '../../src/application/index.js';
import type { KafkaNames } from '../../src/adapters/kafka/kafka-names.js';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient, inParallel } from '../support/e2e-service.js';
import { runFlood } from '../support/flood.js';
import { type LogLine, startWorker, type WorkerProcess } from '../support/processes.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';
import { drained } from '../support/drained.js';

/** The order topic's partitions a worker's commit consumer was given when it last joined its group. */
const latestAssignment = (lines: readonly LogLine[], names: KafkaNames): number[] | null => {
  const joins = lines.filter(
    (l) => l['msg'] === 'joined consumer group' && l['groupId'] === names.group(ConsumerGroups.COMMIT),
  );
  const last = joins.at(-1)?.['assignment'] as Record<string, number[]> | undefined;
  return last ? (last[names.topic(Topics.ORDERS_RESERVED)] ?? []) : null;
};

const handled = (lines: readonly LogLine[], names: KafkaNames): number =>
  lines
    .filter((l) => l['msg'] === 'batch handled' && l['topic'] === names.topic(Topics.ORDERS_RESERVED))
    .reduce((sum, l) => sum + Number(l['messages']), 0);

describe('two worker processes on the real stack', () => {
  let stack: RealStack;
  let api: SeckillService;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    // short job intervals, so that many ticks happen during the test
    stack = await createRealStack({ SECKILL_OUTBOX_RELAY_MS: '500', SECKILL_PAYMENT_SCAN_MS: '500' });
    api = await stack.start({ http: true, worker: false });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await stack.stop();
  });

  it('share the orders through the consumer group, each order decided once', async () => {
    workers.push(startWorker(stack.env), startWorker(stack.env));
    // both members hold partitions of the order topic, between them all four, none twice
    await eventually(
      () => {
        const [a, b] = workers.map((w) => latestAssignment(w.lines, stack.broker.names));
        expect(a?.length).toBeGreaterThan(0);
        expect(b?.length).toBeGreaterThan(0);
        expect(new Set([...a!, ...b!]).size).toBe(a!.length + b!.length);
        expect(a!.length + b!.length).toBe(4);
      },
      90_000,
      200,
    ).catch((failure: unknown) => {
      // what each worker said about its groups and the broker, to tell a slow rebalance from a dead worker
      const said = workers.map((w, i) => ({
        worker: i,
        exit: w.child.exitCode ?? w.child.signalCode,
        lines: w.lines
          .filter((l) => Number(l['level']) >= 40 || /group|kafka|worker/.test(String(l['msg'])))
          .slice(-15)
          .map((l) => `${String(l['msg'])} ${JSON.stringify(l['groupId'] ?? l['err'] ?? '')}`),
      }));
      throw new Error(`${String(failure)}\n${JSON.stringify(said, null, 2)}`);
    });

    const client = new ApiClient(api.url, TEST_SECRET);
    const products = await inParallel(
      Array.from(
        { length: 12 },
        (_, i) => () => client.listProduct({ name: `Item ${i}`, stock: 10, perUserLimit: 1, maxPerOrder: 1 }),
      ),
      4,
    );
    const floods = await inParallel(
      products.map(
        (productId, i) => () =>
          runFlood(client, { productId, buyers: 40, concurrency: 16, seed: i + 1, repeats: 1 }),
      ),
      3,
    );
    for (const flood of floods) expect(flood.unexpected).toEqual([]);

    await drained(api, 120_000);

    for (const flood of floods) expect(await flood.decide()).toMatchObject({ sold: 10, undecided: 0 });
    const [first, second] = workers.map((w) => handled(w.lines, stack.broker.names));
    expect(first).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(0);
    const audit = await client.request('GET', '/api/v1/admin/audit', {
      token: await client.token('auditor', 'admin'),
    });
    expect(audit.body['violations']).toEqual([]);
  }, 180_000);

  it('run each scheduled job once per tick between them, never twice', async () => {
    const runs = () =>
      workers.flatMap((w, worker) =>
        w.lines
          .filter((l) => l['msg'] === 'scheduled job ran' && l['job'] === 'outbox-relay')
          .map((l) => ({ worker, tick: Date.parse(String(l['tick'])) })),
      );
    await eventually(() => expect(runs().length).toBeGreaterThanOrEqual(12), 60_000, 200);
    const ticks = runs()
      .map((r) => r.tick)
      .sort((a, b) => a - b);
    expect(new Set(ticks).size).toBe(ticks.length);
    const gaps = ticks.slice(1).map((t, i) => t - ticks[i]!);
    // a second run in the same tick would show as a gap far shorter than the 500 ms interval
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(400);
  });
});
