import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MemoryOrderReadModel } from '../../src/adapters/memory/memory-order-read-model.js';
import type { Redis } from 'ioredis';
import {
  OutboxDispatcher,
  commandHandlers,
  PlaceOrder,
  type PlaceOrderResult,
  ProductCatalog,
} from '../../src/application/index.js';
import { MemoryDatabase } from '../../src/adapters/memory/memory-database.js';
import { MemoryInventory } from '../../src/adapters/memory/memory-inventory.js';
import { MemoryMessageBus } from '../../src/adapters/memory/memory-message-bus.js';
import { MemoryOutbox } from '../../src/adapters/memory/memory-outbox.js';
import { MemoryUnitOfWork } from '../../src/adapters/memory/memory-unit-of-work.js';
import { connectRedis, type RedisClient } from '../../src/adapters/redis/redis-connection.js';
import { RedisSoldOutFlags } from '../../src/adapters/redis/redis-sold-out-flags.js';
import { RedisStockGate } from '../../src/adapters/redis/redis-stock-gate.js';
import { RandomIdGenerator } from '../../src/adapters/system/random-id-generator.js';
import { SystemClock } from '../../src/adapters/system/system-clock.js';
import { eventually, noMetrics, silentLogger } from '../support/contract-helpers.js';
import { dropNamespace, freshNamespace } from '../support/redis-contracts.js';

const url = process.env['SECKILL_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

const TERMS = {
  name: 'Limited sneakers',
  stock: 3,
  perUserLimit: 1,
  maxPerOrder: 1,
  saleStartsAt: null,
  saleEndsAt: null,
};

describe('the order path on Redis: one round trip per order, none for the flood', () => {
  const namespace = freshNamespace();
  const connections: RedisClient[] = [];
  let client: Redis;
  let commandsSent = 0;
  let instanceA: PlaceOrder;
  let flagsA: RedisSoldOutFlags;
  let flagsB: RedisSoldOutFlags;
  let gate: RedisStockGate;
  let productId: number;
  let inventoryA: MemoryInventory;

  const connect = () => {
    const c = connectRedis({ url, commandTimeoutMs: 5_000 });
    connections.push(c);
    return c;
  };

  beforeAll(async () => {
    client = connect() as Redis;
    const send = client.sendCommand.bind(client);
    client.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
      commandsSent += 1;
      return send(...args);
    };
    gate = new RedisStockGate(client, namespace);
    flagsA = new RedisSoldOutFlags(client, connect(), namespace);
    flagsB = new RedisSoldOutFlags(connect(), connect(), namespace);
    await Promise.all([flagsA.ready, flagsB.ready]);

    const db = new MemoryDatabase();
    const clock = new SystemClock();
    const inventory = new MemoryInventory(db);
    const bus = new MemoryMessageBus(silentLogger);
    instanceA = new PlaceOrder({
      catalog: new ProductCatalog(inventory, clock, 60_000),
      budgets: { buyer: { points: 100, windowMs: 60_000 }, address: { points: 1_000, windowMs: 60_000 } },
      soldOut: flagsA,
      gate,
      orders: new MemoryOrderReadModel(db),
      commands: commandHandlers({
        unitOfWork: new MemoryUnitOfWork(db),
        ids: new RandomIdGenerator(),
        clock,
        dispatcher: new OutboxDispatcher(new MemoryOutbox(db), bus, clock, silentLogger, noMetrics),
      }).orders,
      clock,
      ids: new RandomIdGenerator(),
      logger: silentLogger,
      metrics: noMetrics,
      lockLeaseMs: 5_000,
      idempotencyKeyTtlMs: 60_000,
      groupCommit: { maxBatch: 100, maxWaitMs: 1, maxConcurrent: 2 },
    });
    inventoryA = inventory;
    const product = await inventory.create(TERMS);
    productId = product.productId;
    await gate.warm(productId, 3);
  });

  afterAll(async () => {
    await dropNamespace(client, namespace);
    await Promise.all(connections.map((c) => c.quit()));
  });

  const buy = (userId: string, idempotencyKey?: string, onProduct = productId): Promise<PlaceOrderResult> =>
    instanceA.execute({
      userId,
      productId: onProduct,
      quantity: 1,
      correlationId: `c-${userId}`,
      clientAddress: () => '10.0.0.7',
      idempotencyKey,
    });

  /** The next turn of the event loop: an unlock asked in this one has been sent by then. */
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  /** The answer, and the Redis commands sent from the call until it was answered. */
  const counted = async (order: () => Promise<PlaceOrderResult>) => {
    const before = commandsSent;
    const answer = await order();
    return { answer, commands: commandsSent - before, before };
  };

  it('an accepted order waits on one Redis command, with or without a key; the unlock leaves after the answer', async () => {
    const roomy = (await inventoryA.create({ ...TERMS, stock: 100, perUserLimit: 5, maxPerOrder: 1 }))
      .productId;
    await gate.warm(roomy, 100);
    expect(await buy('warm-up', undefined, roomy)).toMatchObject({ ok: true });
    await nextTurn();

    for (const key of [undefined, 'k-1']) {
      const { answer, commands, before } = await counted(() => buy(`buyer-${key ?? 'plain'}`, key, roomy));
      expect(answer).toMatchObject({ ok: true, status: 'RESERVED' });
      // the gate's script, with both budgets, the lock, the key, the limit and the stock
      expect(commands).toBe(1);
      // then the lock is freed, after the answer
      await eventually(() => expect(commandsSent - before).toBe(2));
      expect(await buy(`buyer-${key ?? 'plain'}`, undefined, roomy)).toMatchObject({ ok: true });
      await nextTurn();
    }
    // a repeat is answered from its key in the same one command
    const repeat = await counted(() => buy('buyer-k-1', 'k-1', roomy));
    expect(repeat.answer).toMatchObject({ ok: true, replayed: true });
    expect(repeat.commands).toBe(1);
  });

  it('answers SOLD_OUT without a Redis command, with or without a key, until a "stock back" message from another instance', async () => {
    for (const buyer of ['a', 'b', 'c']) expect(await buy(buyer, `k-${buyer}`)).toMatchObject({ ok: true });
    expect(await buy('d')).toMatchObject({ ok: false, code: 'SOLD_OUT' });
    expect(flagsA.isSoldOut(productId)).toBe(true);
    // the process has read who reserved the product: a keyed request from anybody else is turned away here
    await eventually(async () => expect((await counted(() => buy('probe', 'k-probe'))).commands).toBe(0));

    const before = commandsSent;
    for (let i = 0; i < 50; i += 1) {
      expect(await buy(`flood-${i}`)).toMatchObject({ ok: false, code: 'SOLD_OUT' });
      expect(await buy(`keyed-flood-${i}`, `k-${i}`)).toMatchObject({ ok: false, code: 'SOLD_OUT' });
    }
    expect(commandsSent - before).toBe(0);
    // a buyer who reserved may be repeating a 202 that never arrived: the gate answers from the key
    const repeat = await counted(() => buy('a', 'k-a'));
    expect(repeat.answer).toMatchObject({ ok: true, replayed: true, status: 'RESERVED' });
    expect(repeat.commands).toBe(1);

    // another instance gives a unit back and says so on Redis pub/sub
    await gate.restore(productId, (await gate.held(productId)).keys().next().value!);
    await flagsB.announceStockBack(productId);
    await eventually(() => expect(flagsA.isSoldOut(productId)).toBe(false));

    expect(await buy('e')).toMatchObject({ ok: true, status: 'RESERVED' });
    expect(commandsSent).toBeGreaterThan(before);
  });
});
