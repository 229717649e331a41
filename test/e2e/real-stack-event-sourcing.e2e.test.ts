import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConsumerGroups, Topics } from '../../src/application/index.js';
import { createKafka } from '../../src/adapters/kafka/kafka-connection.js';
import { KafkaMessageSubscriber } from '../../src/adapters/kafka/kafka-message-subscriber.js';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { silentLogger } from '../support/contract-helpers.js';
import { drained } from '../support/drained.js';
import { ApiClient } from '../support/e2e-service.js';
import { runFlood } from '../support/flood.js';
import { groupsCaughtUp } from '../support/kafka.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';
import { openEventStream } from '../support/sse.js';

const run = promisify(execFile);

type EventRow = {
  event_id: string;
  type: string;
  schema_version: number;
  correlation_id: string;
  causation_id: string | null;
};
type RebuildReport = {
  eventsRead: number;
  ordersWritten: number;
  checkpoint: number;
  swapped: boolean;
  comparison: { liveRows: number; rebuiltRows: number; differing: number; sample: string[] };
};

describe('event sourcing on the real stack (MariaDB, Redis, Kafka)', () => {
  let stack: RealStack;
  let service: SeckillService;
  let api: ApiClient;

  beforeAll(async () => {
    stack = await createRealStack();
    service = await stack.start();
    api = new ApiClient(service.url, TEST_SECRET);
  }, 60_000);

  afterAll(async () => {
    await stack.stop();
  });

  const sql = async <T>(statement: string, values: unknown[] = []): Promise<T> =>
    (await stack.db.orm.em.getConnection().execute(statement, values)) as T;

  const order = async (buyer: string, productId: number, correlationId: string): Promise<string> => {
    const answer = await api.request('POST', '/api/v1/seckill/orders', {
      token: await api.token(buyer),
      json: { productId, quantity: 1 },
      headers: { 'x-request-id': correlationId },
    });
    expect(answer.status).toBe(202);
    return answer.body['orderId'] as string;
  };

  const eventsOf = (orderId: string) =>
    sql<EventRow[]>(
      'SELECT event_id, type, schema_version, correlation_id, causation_id FROM event_store WHERE stream_id = ? ORDER BY stream_version',
      [`order-${orderId}`],
    );

  /** Every message on both topics, read from the beginning by a fresh group, by order id. */
  const messagesOnKafka = async () => {
    const kafka = createKafka({ brokers: stack.broker.brokers.split(',') }, silentLogger);
    const reader = new KafkaMessageSubscriber(kafka, silentLogger, {
      sessionTimeoutMs: 6_000,
      maxWaitTimeMs: 200,
      names: stack.broker.names,
    });
    const seen: Array<{ topic: string; headers: Record<string, string> }> = [];
    const subs = [Topics.ORDERS_RESERVED, Topics.STOCK_COMPENSATION].map((topic) => ({
      topic,
      groupId: `${ConsumerGroups.COMMIT}-read-${randomUUID()}`,
    }));
    for (const sub of subs)
      await reader.subscribe(sub, (messages) => {
        for (const m of messages) seen.push({ topic: sub.topic, headers: { ...m.headers } });
        return Promise.resolve();
      });
    try {
      await groupsCaughtUp(kafka, subs, stack.broker.names, 60_000);
    } finally {
      await reader.stop();
    }
    return seen;
  };

  it("carries an order request's correlation id on every event and message the order caused", async () => {
    // one order committed, then released by the payment timeout; one released at the commit (MySQL had no stock)
    const timedOut = await api.listProduct({ name: 'Watch', stock: 3, perUserLimit: 1, maxPerOrder: 1 });
    const refused = await api.listProduct({ name: 'Lamp', stock: 1, perUserLimit: 1, maxPerOrder: 1 });
    await sql('UPDATE product SET stock = 0 WHERE id = ?', [refused]);
    const timeoutCorrelation = `corr-timeout-${randomUUID()}`;
    const refusedCorrelation = `corr-refused-${randomUUID()}`;
    const timeoutOrder = await order('ada', timedOut, timeoutCorrelation);
    const refusedOrder = await order('bob', refused, refusedCorrelation);
    await drained(service);
    // a second process whose payment timeout has already passed runs the release job's work once
    const impatient = await stack.start({ http: false, worker: false }, { SECKILL_PAYMENT_TIMEOUT_MS: '1' });
    expect(await impatient.app.releaseOrder.releaseExpired()).toBe(1);
    await drained(service);
    await drained(impatient);

    const timeoutEvents = await eventsOf(timeoutOrder);
    expect(timeoutEvents.map((e) => e.type)).toEqual([
      'OrderReserved',
      'StockCommitted',
      'ReservationReleased',
    ]);
    const refusedEvents = await eventsOf(refusedOrder);
    expect(refusedEvents.map((e) => e.type)).toEqual(['OrderReserved', 'ReservationReleased']);
    for (const [events, correlation] of [
      [timeoutEvents, timeoutCorrelation],
      [refusedEvents, refusedCorrelation],
    ] as const) {
      expect(new Set(events.map((e) => e.correlation_id))).toEqual(new Set([correlation]));
      // caused by: the request; the reservation message; (the timeout) the commit whose payment never came
      expect(events[0]?.causation_id).toBe(correlation);
      expect(events[1]?.causation_id).toBe(
        `reserved-${events === timeoutEvents ? timeoutOrder : refusedOrder}`,
      );
      expect(events.every((e) => e.schema_version === 1 && /^[0-9a-f-]{36}$/.test(e.event_id))).toBe(true);
    }
    expect(timeoutEvents[2]?.causation_id).toBe(timeoutEvents[1]?.event_id);

    const outbox = await sql<Array<{ order_id: string; topic: string; headers: unknown }>>(
      'SELECT order_id, topic, headers FROM outbox_message WHERE order_id IN (?, ?)',
      [timeoutOrder, refusedOrder],
    );
    const headersOf = (value: unknown) =>
      (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, string>;
    expect(outbox.map((m) => [m.order_id, m.topic, headersOf(m.headers)['correlation-id']]).sort()).toEqual(
      [
        [timeoutOrder, Topics.ORDERS_RESERVED, timeoutCorrelation],
        [timeoutOrder, Topics.STOCK_COMPENSATION, timeoutCorrelation],
        [refusedOrder, Topics.ORDERS_RESERVED, refusedCorrelation],
        [refusedOrder, Topics.STOCK_COMPENSATION, refusedCorrelation],
      ].sort(),
    );

    const onKafka = (await messagesOnKafka()).filter((m) =>
      [timeoutOrder, refusedOrder].includes(m.headers['order-id'] ?? ''),
    );
    expect(onKafka.map((m) => [m.headers['order-id'], m.topic, m.headers['correlation-id']]).sort()).toEqual(
      outbox.map((m) => [m.order_id, m.topic, headersOf(m.headers)['correlation-id']]).sort(),
    );
  });

  it('lets a buyer watch an order decide on another API replica than the one that took it', async () => {
    const productId = await api.listProduct({ name: 'Kettle', stock: 2, perUserLimit: 1, maxPerOrder: 1 });
    const replica = await stack.start({ http: true, worker: false }, { SECKILL_ORDER_EVENTS_POLL_MS: '50' });
    const orderId = await order('cleo', productId, `corr-watch-${randomUUID()}`);
    const token = await api.token('cleo');
    const stream = await openEventStream(`${replica.url}/api/v1/orders/${orderId}/events`, token);
    let event = await stream.next();
    if (event?.data['status'] === 'RESERVED') event = await stream.next();
    expect(event?.data).toMatchObject({ orderId, status: 'COMMITTED' });
    const paid = await api.request('POST', `/api/v1/orders/${orderId}/payment`, { token });
    expect(paid.status).toBe(200);
    expect((await stream.next())?.data).toMatchObject({ orderId, status: 'PAID' });
    expect(await stream.next()).toBeNull();
  });

  it('`seckill projections rebuild` reproduces the live orders table exactly after a flash sale', async () => {
    const productId = await api.listProduct({ name: 'Console', stock: 120, perUserLimit: 1, maxPerOrder: 1 });
    const flood = await runFlood(api, { productId, buyers: 1_000, concurrency: 64, seed: 11 });
    expect(flood.unexpected).toEqual([]);
    await drained(service);
    // some buyers pay, some cancel: every status the projection knows
    const committed = await sql<Array<{ order_id: string; user_id: string }>>(
      "SELECT order_id, user_id FROM orders WHERE product_id = ? AND status = 'COMMITTED' ORDER BY order_id",
      [productId],
    );
    expect(committed.length).toBe(120);
    for (const [i, o] of committed.entries()) {
      if (i % 3 === 2) continue;
      const action = i % 3 === 0 ? 'payment' : 'cancel';
      const answer = await api.request('POST', `/api/v1/orders/${o.order_id}/${action}`, {
        token: await api.token(o.user_id),
      });
      expect(answer.status).toBe(200);
    }
    await drained(service);
    const cli = (...args: string[]) =>
      run('node', ['bin/seckill.js', 'projections', 'rebuild', '--json', ...args], {
        env: { ...process.env, ...stack.env },
      });

    const report = JSON.parse((await cli()).stdout) as RebuildReport;

    expect(report.comparison).toEqual({
      liveRows: report.comparison.rebuiltRows,
      rebuiltRows: expect.any(Number),
      differing: 0,
      sample: [],
    });
    expect(report.comparison.liveRows).toBeGreaterThanOrEqual(committed.length);
    const rows = (table: string) => sql<unknown[]>(`SELECT * FROM ${table} ORDER BY order_id`);
    expect(await rows('orders_rebuild')).toEqual(await rows('orders'));
    const statuses = await sql<Array<{ status: string }>>(
      'SELECT DISTINCT status FROM orders ORDER BY status',
    );
    expect(statuses.map((s) => s.status)).toEqual(['COMMITTED', 'PAID', 'RELEASED']);

    // a damaged read model is found, and replaced by the rebuilt one
    const damaged = committed[1]!.order_id;
    await sql("UPDATE orders SET status = 'PAID', reason = NULL WHERE order_id = ?", [damaged]);
    const found = await cli().then(
      () => null,
      (error: { code: number; stdout: string }) => ({
        code: error.code,
        report: JSON.parse(error.stdout) as RebuildReport,
      }),
    );
    expect(found).toMatchObject({ code: 1, report: { comparison: { differing: 1, sample: [damaged] } } });
    const swapped = JSON.parse((await cli('--swap')).stdout) as RebuildReport;
    expect(swapped.swapped).toBe(true);
    expect(await sql('SELECT status, reason FROM orders WHERE order_id = ?', [damaged])).toEqual([
      { status: 'RELEASED', reason: 'CANCELLED' },
    ]);
  });
});
