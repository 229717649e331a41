import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConsumerGroups, Topics } from '../../src/application/index.js';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { expectBooksAgree, expectEachOrderDecidedOnce, expectOrdersAgree } from '../support/books.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient } from '../support/e2e-service.js';
import { runFlood } from '../support/flood.js';
import { requireCluster } from '../support/kafka.js';
import { type LogLine, startWorker, type WorkerProcess } from '../support/processes.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { drained } from '../support/drained.js';

describe("drill: a worker's consumer group rebalanced mid-batch by a second worker starting", () => {
  let stack: RealStack;
  let api: SeckillService;
  const workers: WorkerProcess[] = [];
  let proxy: TcpProxy;

  beforeAll(async () => {
    // small batches, one partition at a time: a long run of batches for the first worker
    stack = await createRealStack({
      SECKILL_KAFKA_MAX_BYTES_PER_PARTITION: '1024',
      SECKILL_KAFKA_CONCURRENCY: '1',
    });
    requireCluster(stack.broker);
    const server = new URL(stack.db.url);
    proxy = await new TcpProxy(server.hostname, Number(server.port || 3306)).start();
    api = await stack.start({ http: true, worker: false });
  }, 60_000);

  afterAll(async () => {
    proxy.thaw();
    await Promise.all(workers.map((w) => w.stop()));
    await proxy.down();
    await stack.stop();
  });

  it('hands partitions over while batches are under way, deciding every order exactly once', async () => {
    const names = stack.broker.names;
    const joins = (lines: readonly LogLine[]) =>
      lines.filter(
        (l) => l['msg'] === 'joined consumer group' && l['groupId'] === names.group(ConsumerGroups.COMMIT),
      );
    const partitionsOf = (line: LogLine | undefined) =>
      (
        (line?.['assignment'] as Record<string, number[]> | undefined)?.[
          names.topic(Topics.ORDERS_RESERVED)
        ] ?? []
      ).length;
    const handled = (lines: readonly LogLine[]) =>
      lines
        .filter((l) => l['msg'] === 'batch handled' && l['topic'] === names.topic(Topics.ORDERS_RESERVED))
        .reduce((n, l) => n + Number(l['messages']), 0);

    const client = new ApiClient(api.url, TEST_SECRET);
    const products = await Promise.all(
      ['R1', 'R2', 'R3', 'R4'].map((name) =>
        client.listProduct({ name, stock: 200, perUserLimit: 1, maxPerOrder: 1 }),
      ),
    );
    // a backlog first, with no worker running
    const floods = await Promise.all(
      products.map((productId, i) =>
        runFlood(client, { productId, buyers: 240, concurrency: 8, seed: 90 + i, repeats: 0 }),
      ),
    );
    for (const flood of floods) expect(flood.accepted).toHaveLength(200);

    // the first worker reaches MariaDB through a proxy, which the drill freezes in the middle of a batch
    const viaProxy = new URL(stack.db.url);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const first = startWorker({ ...stack.env, SECKILL_MYSQL_URL: viaProxy.toString() });
    workers.push(first);
    await eventually(() => expect(handled(first.lines)).toBeGreaterThan(0), 60_000, 5);
    expect(partitionsOf(joins(first.lines).at(-1))).toBe(4);
    proxy.freeze();

    // the second worker joins while the first is stuck in its batch: the group rebalances around it
    const second = startWorker(stack.env);
    workers.push(second);
    await eventually(() => expect(partitionsOf(joins(second.lines).at(-1))).toBeGreaterThan(0), 60_000, 20);
    const undecidedAtRebalance = (await Promise.all(floods.map((f) => f.decide()))).reduce(
      (n, d) => n + d.undecided,
      0,
    );
    expect(undecidedAtRebalance).toBeGreaterThan(0);

    // the first worker's batch ends (committed, or failed and left to the group); it rejoins and shares
    proxy.thaw();
    await eventually(
      () => {
        expect(partitionsOf(joins(first.lines).at(-1))).toBeGreaterThan(0);
        expect(partitionsOf(joins(first.lines).at(-1))).toBeLessThan(4);
      },
      60_000,
      20,
    );
    await drained(api, 120_000);
    expect(handled(second.lines)).toBeGreaterThan(0);
    for (const flood of floods)
      expect(await flood.decide()).toEqual({ sold: 200, undecided: 0, maxUnitsPerBuyer: 1, released: {} });
    await expectEachOrderDecidedOnce(stack.db, 800);
    await expectOrdersAgree(stack.db, await expectBooksAgree(client, products), products);
  }, 180_000);
});
