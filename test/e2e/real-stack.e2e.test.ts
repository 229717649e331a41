import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConsumerGroups, Topics } from '../../src/application/index.js';
import { createKafka } from '../../src/adapters/kafka/kafka-connection.js';
import { KafkaMessageSubscriber } from '../../src/adapters/kafka/kafka-message-subscriber.js';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { silentLogger } from '../support/contract-helpers.js';
import { ApiClient } from '../support/e2e-service.js';
import { runFlood, type FloodResult } from '../support/flood.js';
import { groupsCaughtUp } from '../support/kafka.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';
import { drained } from '../support/drained.js';

type AuditLine = {
  productId: number;
  listed: number;
  sold: number;
  mysqlStock: number;
  gateStock: number;
  undecided: number;
};
type Audit = { ok: boolean; eventsReplayed: number; violations: unknown[]; products: AuditLine[] };

describe('the real stack (Redis + MariaDB + Kafka protocol) over HTTP', () => {
  let stack: RealStack;
  let service: SeckillService;
  let api: ApiClient;
  let productId: number;
  let flood: FloodResult;

  const audit = async (): Promise<Audit> =>
    (await api.request('GET', '/api/v1/admin/audit', { token: await api.token('auditor', 'admin') }))
      .body as Audit;

  beforeAll(async () => {
    stack = await createRealStack();
    service = await stack.start();
    api = new ApiClient(service.url, TEST_SECRET);
  }, 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  it('sells exactly 200 units to 5,000 buyers clicking repeatedly: MySQL 0, gate 0, nobody over the limit, audit clean', async () => {
    productId = await api.listProduct({
      name: 'Flagship phone',
      stock: 200,
      perUserLimit: 2,
      maxPerOrder: 1,
    });
    flood = await runFlood(api, { productId, buyers: 5_000, concurrency: 128, seed: 7 });
    expect(flood.unexpected).toEqual([]);
    expect(flood.accepted.length).toBeGreaterThanOrEqual(200);

    await drained(service);

    const decided = await flood.decide();
    expect(decided.undecided).toBe(0);
    expect(decided.sold).toBe(200);
    expect(decided.maxUnitsPerBuyer).toBeLessThanOrEqual(2);
    const report = await audit();
    expect(report.violations).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.products.find((p) => p.productId === productId)).toMatchObject({
      listed: 200,
      sold: 200,
      mysqlStock: 0,
      gateStock: 0,
      undecided: 0,
    });
  });

  it('changes nothing when the order topic is read again from the beginning by a fresh consumer group', async () => {
    const before = await audit();
    const kafka = createKafka({ brokers: stack.broker.brokers.split(',') }, silentLogger);
    const replayer = new KafkaMessageSubscriber(kafka, silentLogger, {
      sessionTimeoutMs: 6_000,
      maxWaitTimeMs: 200,
      names: stack.broker.names,
    });
    const commit = service.app.commit;
    const groupId = `${ConsumerGroups.COMMIT}-replay-${randomUUID()}`;
    let replayed = 0;
    await replayer.subscribe({ topic: Topics.ORDERS_RESERVED, groupId }, async (messages) => {
      await commit.handle(messages);
      replayed += messages.length;
    });
    try {
      await groupsCaughtUp(kafka, [{ groupId, topic: Topics.ORDERS_RESERVED }], stack.broker.names, 60_000);
    } finally {
      await replayer.stop();
    }
    await drained(service);
    expect(replayed).toBeGreaterThanOrEqual(flood.accepted.length);
    expect(await audit()).toEqual(before);
  });
});
