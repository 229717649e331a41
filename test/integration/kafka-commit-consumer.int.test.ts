import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MySqlOrderReadModel } from '../../src/adapters/mysql/mysql-order-read-model.js';
import type { Kafka } from 'kafkajs';
import {
  CommitReservations,
  ConsumerGroups,
  type Logger,
  OutboxDispatcher,
  commandHandlers,
  PlaceOrder,
  ProductCatalog,
  Topics,
} from '../../src/application/index.js';
import { createKafka } from '../../src/adapters/kafka/kafka-connection.js';
import { KafkaMessagePublisher } from '../../src/adapters/kafka/kafka-message-publisher.js';
import { KafkaMessageSubscriber } from '../../src/adapters/kafka/kafka-message-subscriber.js';
import { MemorySoldOutFlags } from '../../src/adapters/memory/memory-sold-out-flags.js';
import { MemoryStockGate } from '../../src/adapters/memory/memory-stock-gate.js';
import { MySqlInventory } from '../../src/adapters/mysql/mysql-inventory.js';
import { openMySql } from '../../src/adapters/mysql/mysql-orm.js';
import { MySqlOutbox } from '../../src/adapters/mysql/mysql-outbox.js';
import { standaloneSession } from '../../src/adapters/mysql/mysql-session.js';
import { MySqlUnitOfWork } from '../../src/adapters/mysql/mysql-unit-of-work.js';
import { RandomIdGenerator } from '../../src/adapters/system/random-id-generator.js';
import { SystemClock } from '../../src/adapters/system/system-clock.js';
import { eventually, noMetrics, silentLogger } from '../support/contract-helpers.js';
import { groupsCaughtUp, startTestBroker, type TestBroker } from '../support/kafka.js';
import { createTestDatabase, mysqlServerUrl, type TestDatabase } from '../support/mysql-database.js';
import { TcpProxy } from '../support/tcp-proxy.js';

/** Counts the batches the consumer had to give back. */
const recordingLogger = () => {
  const warnings: string[] = [];
  const logger: Logger = {
    info: () => undefined,
    error: () => undefined,
    warn: (_d, message) => warnings.push(message),
  };
  return { logger, warnings };
};

describe('the commit consumer on Kafka while MariaDB goes away', () => {
  let db: TestDatabase;
  let broker: TestBroker;
  let kafka: Kafka;
  let proxy: TcpProxy;

  beforeAll(async () => {
    [db, broker] = await Promise.all([createTestDatabase(), startTestBroker()]);
    kafka = createKafka({ brokers: broker.brokers.split(',') }, silentLogger);
    const server = new URL(mysqlServerUrl());
    proxy = await new TcpProxy(server.hostname, Number(server.port || 3306)).start();
  }, 60_000);

  afterAll(async () => {
    await proxy.down();
    await broker.stop();
    await db.drop();
  });

  it('pauses while MariaDB is down and, once it is back, decides every order once: none lost, none skipped', async () => {
    const clock = new SystemClock();
    const direct = standaloneSession(db.orm, 5_000);
    const inventory = new MySqlInventory(direct);
    const product = await inventory.create({
      name: 'Hot row',
      stock: 25,
      perUserLimit: 1,
      maxPerOrder: 1,
      saleStartsAt: null,
      saleEndsAt: null,
    });
    const gate = new MemoryStockGate();
    await gate.warm(product.productId, 30); // more than MySQL has: MySQL's word must decide the last 5
    await broker.createTopics(Topics.ORDERS_RESERVED, Topics.STOCK_COMPENSATION);
    const publisher = new KafkaMessagePublisher(kafka, {
      names: broker.names,
      idempotent: broker.cluster !== null,
    });
    const dispatcher = new OutboxDispatcher(
      new MySqlOutbox(direct),
      publisher,
      clock,
      silentLogger,
      noMetrics,
    );
    const placeOrder = new PlaceOrder({
      catalog: new ProductCatalog(inventory, clock, 60_000),
      budgets: { buyer: { points: 100, windowMs: 1_000 }, address: null },
      soldOut: new MemorySoldOutFlags(),
      gate,
      orders: new MySqlOrderReadModel(standaloneSession(db.orm, 5_000)),
      commands: commandHandlers({
        unitOfWork: new MySqlUnitOfWork(db.orm, 5_000),
        ids: new RandomIdGenerator(),
        clock,
        dispatcher,
      }).orders,
      clock,
      ids: new RandomIdGenerator(),
      logger: silentLogger,
      metrics: noMetrics,
      lockLeaseMs: 5_000,
      idempotencyKeyTtlMs: 60_000,
      groupCommit: { maxBatch: 100, maxWaitMs: 1, maxConcurrent: 2 },
    });

    // the consumer reaches MariaDB through the proxy only
    const url = new URL(db.url);
    url.host = `127.0.0.1:${proxy.port}`;
    const consumerOrm = await openMySql({
      url: url.toString(),
      connectTimeoutMs: 300,
      acquireTimeoutMs: 300,
      operationTimeoutMs: 1_000,
    });
    const consumerDispatcher = new OutboxDispatcher(
      new MySqlOutbox(standaloneSession(db.orm, 5_000)),
      publisher,
      clock,
      silentLogger,
      noMetrics,
    );
    const commit = new CommitReservations({
      orders: commandHandlers({
        unitOfWork: new MySqlUnitOfWork(consumerOrm, 1_000),
        ids: new RandomIdGenerator(),
        clock,
        dispatcher: consumerDispatcher,
      }).orders,
      clock,
      logger: silentLogger,
      metrics: noMetrics,
      mergeDecrements: true,
    });
    const { logger, warnings } = recordingLogger();
    const subscriber = new KafkaMessageSubscriber(kafka, logger, {
      retryDelayMs: 200,
      sessionTimeoutMs: 6_000,
      maxWaitTimeMs: 200,
      names: broker.names,
    });
    try {
      await subscriber.subscribe({ topic: Topics.ORDERS_RESERVED, groupId: ConsumerGroups.COMMIT }, (m) =>
        commit.handle(m),
      );
      await proxy.down();

      const orderIds: string[] = [];
      for (let i = 0; i < 30; i += 1) {
        const placed = await placeOrder.execute({
          userId: `u${i}`,
          productId: product.productId,
          quantity: 1,
          correlationId: `c${i}`,
        });
        if (!placed.ok) throw new Error(`order ${i} refused: ${placed.code}`);
        orderIds.push(placed.orderId);
      }
      await dispatcher.settle();
      await eventually(
        () => expect(warnings.filter((w) => w.startsWith('batch failed')).length).toBeGreaterThan(1),
        30_000,
        50,
      );

      await proxy.start();
      await groupsCaughtUp(
        kafka,
        [{ groupId: ConsumerGroups.COMMIT, topic: Topics.ORDERS_RESERVED }],
        broker.names,
        60_000,
      );

      const connection = db.orm.em.getConnection();
      const statuses = await connection.execute<Array<{ status: string; n: number }>>(
        'SELECT status, COUNT(*) AS n FROM orders GROUP BY status ORDER BY status',
      );
      expect(statuses.map((r) => [r.status, Number(r.n)])).toEqual([
        ['COMMITTED', 25],
        ['RELEASED', 5],
      ]);
      const [stock] = await connection.execute<Array<{ stock: number }>>(
        'SELECT stock FROM product WHERE id = ?',
        [product.productId],
      );
      expect(stock?.stock).toBe(0);
      // every order was decided exactly once: its stream holds one reservation and one decision
      const streams = await connection.execute<Array<{ n: number }>>(
        "SELECT COUNT(*) AS n FROM event_store WHERE stream_id LIKE 'order-%' GROUP BY stream_id",
      );
      expect(streams).toHaveLength(orderIds.length);
      expect(streams.every((s) => Number(s.n) === 2)).toBe(true);
    } finally {
      await subscriber.stop();
      await consumerDispatcher.settle();
      await dispatcher.settle();
      await publisher.disconnect();
      await consumerOrm.close(true);
    }
  });
});
