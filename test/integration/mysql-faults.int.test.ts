import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { MySqlOrderReadModel } from '../../src/adapters/mysql/mysql-order-read-model.js';
import type { MikroORM } from '@mikro-orm/mysql';
import {
  CommitOutcomeUnknown,
  InfrastructureUnavailable,
  OutboxDispatcher,
  commandHandlers,
  PlaceOrder,
  ProductCatalog,
} from '../../src/application/index.js';
import { MemoryMessageBus } from '../../src/adapters/memory/memory-message-bus.js';
import { MemorySoldOutFlags } from '../../src/adapters/memory/memory-sold-out-flags.js';
import { MemoryStockGate } from '../../src/adapters/memory/memory-stock-gate.js';
import { MySqlInventory } from '../../src/adapters/mysql/mysql-inventory.js';
import { openMySql } from '../../src/adapters/mysql/mysql-orm.js';
import { MySqlOutbox } from '../../src/adapters/mysql/mysql-outbox.js';
import { standaloneSession } from '../../src/adapters/mysql/mysql-session.js';
import { MySqlUnitOfWork } from '../../src/adapters/mysql/mysql-unit-of-work.js';
import { RandomIdGenerator } from '../../src/adapters/system/random-id-generator.js';
import { SystemClock } from '../../src/adapters/system/system-clock.js';
import { eventually, noMetrics, silentLogger, timed } from '../support/contract-helpers.js';
import { createTestDatabase, mysqlServerUrl, type TestDatabase } from '../support/mysql-database.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const TIMEOUT_MS = 800;

describe('MariaDB that stops answering or goes down', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let orm: MikroORM;
  let productId: number;
  const gate = new MemoryStockGate();

  beforeAll(async () => {
    db = await createTestDatabase();
  }, 60_000);

  afterAll(async () => {
    await db.drop();
  });

  beforeEach(async () => {
    const server = new URL(mysqlServerUrl());
    proxy = await new TcpProxy(server.hostname, Number(server.port || 3306)).start();
    const url = new URL(db.url);
    url.host = `127.0.0.1:${proxy.port}`;
    orm = await openMySql({
      url: url.toString(),
      poolMax: 4,
      connectTimeoutMs: 500,
      acquireTimeoutMs: 500,
      operationTimeoutMs: TIMEOUT_MS,
    });
    const product = await new MySqlInventory(standaloneSession(db.orm, 5_000)).create({
      name: 'Hot row',
      stock: 10,
      perUserLimit: 5,
      maxPerOrder: 1,
      saleStartsAt: null,
      saleEndsAt: null,
    });
    productId = product.productId;
    await gate.warm(productId, 10);
  });

  afterEach(async () => {
    proxy.thaw();
    await proxy.down();
    await orm.close(true);
  });

  const placeOrder = () => {
    const clock = new SystemClock();
    const inventory = new MySqlInventory(standaloneSession(orm, TIMEOUT_MS));
    return new PlaceOrder({
      catalog: new ProductCatalog(inventory, clock, 60_000),
      budgets: { buyer: { points: 100, windowMs: 1_000 }, address: null },
      soldOut: new MemorySoldOutFlags(),
      gate,
      orders: new MySqlOrderReadModel(standaloneSession(orm, TIMEOUT_MS)),
      commands: commandHandlers({
        unitOfWork: new MySqlUnitOfWork(orm, TIMEOUT_MS),
        ids: new RandomIdGenerator(),
        clock,
        dispatcher: new OutboxDispatcher(
          new MySqlOutbox(standaloneSession(orm, TIMEOUT_MS)),
          new MemoryMessageBus(silentLogger),
          clock,
          silentLogger,
          noMetrics,
        ),
      }).orders,
      clock,
      ids: new RandomIdGenerator(),
      logger: silentLogger,
      metrics: noMetrics,
      lockLeaseMs: 5_000,
      idempotencyKeyTtlMs: 60_000,
      groupCommit: { maxBatch: 100, maxWaitMs: 1, maxConcurrent: 2 },
    });
  };

  const rows = async (table: string): Promise<number> => {
    const [row] = await db.orm.em
      .getConnection()
      .execute<Array<{ n: number }>>(`SELECT COUNT(*) AS n FROM ${table}`);
    return Number(row?.n);
  };

  /** Connections of the proxied pool still busy: the abandoned transaction must end before rows are counted. */
  const busyConnections = (): number => {
    const pool = (
      orm.em.getConnection().getKnex().client as { pool: { numUsed(): number; numPendingAcquires(): number } }
    ).pool;
    return pool.numUsed() + pool.numPendingAcquires();
  };

  it('fails the order fast with the unavailable error when MariaDB stops answering, restores the gate, and writes nothing', async () => {
    const orders = placeOrder();
    await orders.execute({ userId: 'warm-up', productId, quantity: 1, correlationId: 'c0' }); // terms cached, pool open
    const before = {
      events: await rows('event_store'),
      orders: await rows('orders'),
      gate: await gate.stockLeft(productId),
    };

    proxy.freeze();
    const { value, ms } = await timed(
      orders.execute({ userId: 'alice', productId, quantity: 1, correlationId: 'c1' }).then(
        () => null,
        (error: unknown) => error,
      ),
    );
    expect(value).toBeInstanceOf(InfrastructureUnavailable);
    expect(ms).toBeLessThan(TIMEOUT_MS * 5);
    expect(await gate.stockLeft(productId)).toBe(before.gate);

    // once MariaDB answers again, the abandoned transaction must not have committed late
    proxy.thaw();
    await eventually(() => expect(busyConnections()).toBe(0), 5_000, 20);
    expect({ events: await rows('event_store'), orders: await rows('orders') }).toEqual({
      events: before.events,
      orders: before.orders,
    });
    expect(
      await orders.execute({ userId: 'bob', productId, quantity: 1, correlationId: 'c2' }),
    ).toMatchObject({
      ok: true,
    });
  });

  it('fails fast with the unavailable error when MariaDB is down', async () => {
    const orders = placeOrder();
    await orders.execute({ userId: 'warm-up', productId, quantity: 1, correlationId: 'c0' });
    await proxy.down();
    await expect(
      orders.execute({ userId: 'carol', productId, quantity: 1, correlationId: 'c3' }),
    ).rejects.toBeInstanceOf(InfrastructureUnavailable);
    await expect(new MySqlUnitOfWork(orm, TIMEOUT_MS).run(() => Promise.resolve(1))).rejects.toBeInstanceOf(
      InfrastructureUnavailable,
    );
  });

  it('says the outcome is unknown when the commit was sent and no answer came: the commit may land after that', async () => {
    const unitOfWork = new MySqlUnitOfWork(orm, TIMEOUT_MS);
    const products = await rows('product');
    const failure = unitOfWork
      .run(async ({ inventory }) => {
        await inventory.create({
          name: 'Committed late',
          stock: 1,
          perUserLimit: 1,
          maxPerOrder: 1,
          saleStartsAt: null,
          saleEndsAt: null,
        });
        // the writer stops answering just before the commit reaches it
        proxy.freeze();
      })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(await failure).toBeInstanceOf(CommitOutcomeUnknown);

    // the commit was on its way: once it arrives, it lands, after the caller was told the write failed
    proxy.thaw();
    await eventually(() => expect(busyConnections()).toBe(0), 5_000, 20);
    expect(await rows('product')).toBe(products + 1);
  });

  it('answers a transaction committed as its deadline passed with its result, not the unavailable error', async () => {
    const unitOfWork = new MySqlUnitOfWork(orm, TIMEOUT_MS);
    const products = await rows('product');
    // MariaDB answers the commit; what the transaction sends after it (the pool's hand-back) is held past the
    // deadline, as a stalled event loop or network would hold it
    proxy.freezeOn('COMMIT;');
    const outcome = await unitOfWork
      .run(async ({ inventory }) => {
        const created = await inventory.create({
          name: 'Committed at the deadline',
          stock: 1,
          perUserLimit: 1,
          maxPerOrder: 1,
          saleStartsAt: null,
          saleEndsAt: null,
        });
        return created.productId;
      })
      .then(
        (id) => ({ id }),
        (error: unknown) => ({ error }),
      );
    // told "unavailable", a caller would undo what it did before (a gate gives the order's unit back) while the
    // order stands in MySQL: a second order for the buyer's retry, one unit sold twice
    expect(outcome).toEqual({ id: expect.any(Number) });
    expect(await rows('product')).toBe(products + 1);
    proxy.thaw();
    await eventually(() => expect(busyConnections()).toBe(0), 5_000, 20);
    expect(await rows('product')).toBe(products + 1);
  });

  it('says the outcome is known when the transaction failed before its commit was sent', async () => {
    const unitOfWork = new MySqlUnitOfWork(orm, TIMEOUT_MS);
    const failure = unitOfWork
      .run(async ({ inventory }) => {
        proxy.freeze();
        await inventory.get(productId);
      })
      .then(
        () => null,
        (error: unknown) => error,
      );
    const error = await failure;
    expect(error).toBeInstanceOf(InfrastructureUnavailable);
    expect(error).not.toBeInstanceOf(CommitOutcomeUnknown);
  });
});
