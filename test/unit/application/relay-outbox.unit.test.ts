import { afterEach, describe, expect, it } from '@jest/globals';
import { OutboxStatus, Topics } from '../../../src/application/index.js';
import { type AppHarness, MINUTE, startApp } from '../../support/app-harness.js';

describe('RelayOutbox', () => {
  let app: AppHarness;
  afterEach(() => app.close());

  const nothing = { published: 0, failed: 0, dead: 0 };

  it('publishes PENDING rows once they are older than the grace, and marks them SENT', async () => {
    app = await startApp({ relay: { pendingGraceMs: 10_000 } });
    const productId = await app.listProduct({ stock: 5 });
    app.publisher.failing = true;
    const first = await app.mustBuy('alice', productId);
    app.clock.advance(1_000);
    const second = await app.mustBuy('bob', productId);
    await app.drained();
    app.publisher.failing = false;

    app.clock.advance(9_000);
    expect(await app.relay.run()).toEqual(nothing);
    app.clock.advance(1);
    expect(await app.relay.run()).toEqual({ published: 1, failed: 0, dead: 0 });
    expect((await app.reservedRow(first)).status).toBe(OutboxStatus.SENT);
    expect((await app.reservedRow(second)).status).toBe(OutboxStatus.PENDING);
    app.clock.advance(1_000);
    expect(await app.relay.run()).toEqual({ published: 1, failed: 0, dead: 0 });

    await app.drained();
    expect(await app.order(first)).toMatchObject({ status: 'COMMITTED' });
    expect(await app.order(second)).toMatchObject({ status: 'COMMITTED' });
    expect(await app.mysqlStock(productId)).toBe(3);
    expect(app.metrics.total('outbox_published', { topic: Topics.ORDERS_RESERVED })).toBe(2);
  });

  it('recovers at start: a row an earlier process left is sent at once, and calls made during a run share it', async () => {
    app = await startApp({ relay: { pendingGraceMs: 2_000 } });
    const productId = await app.listProduct({ stock: 5 });
    app.publisher.failing = true;
    const left = await app.mustBuy('alice', productId);
    await app.drained();
    app.publisher.failing = false;
    app.clock.advance(2_001);

    // a worker starting and being given its partitions at about the same time
    await Promise.all([
      app.relay.recoverSoon('worker started'),
      app.relay.recoverSoon('partitions assigned'),
    ]);
    await app.drained();

    expect(await app.order(left)).toMatchObject({ status: 'COMMITTED' });
    expect(app.metrics.total('outbox_published', { topic: Topics.ORDERS_RESERVED })).toBe(1);
  });

  it('logs a recovery that failed and does not throw: the scheduled relay carries on', async () => {
    app = await startApp({ relay: { pendingGraceMs: 2_000 } });
    const productId = await app.listProduct({ stock: 5 });
    app.publisher.failing = true;
    await app.mustBuy('alice', productId);
    await app.drained();
    app.clock.advance(2_001);

    await expect(app.relay.recoverSoon('worker started')).resolves.toBeUndefined();
    expect(app.metrics.total('outbox_published', { topic: Topics.ORDERS_RESERVED })).toBe(0);
  });

  it('re-sends a SENT row nobody consumed after staleSentMs; the duplicate is harmless', async () => {
    app = await startApp({ consumers: false, relay: { pendingGraceMs: 10_000, staleSentMs: 5 * MINUTE } });
    const productId = await app.listProduct({ stock: 5 });
    const orderId = await app.mustBuy('alice', productId);
    await app.drained();
    expect((await app.reservedRow(orderId)).status).toBe(OutboxStatus.SENT);

    app.clock.advance(5 * MINUTE - 1);
    expect(await app.relay.run()).toEqual(nothing);
    app.clock.advance(2);
    expect(await app.relay.run()).toEqual({ published: 1, failed: 0, dead: 0 });
    expect(app.bus.messages(Topics.ORDERS_RESERVED)).toHaveLength(2);

    await app.startConsumers();
    await app.drained();

    expect(await app.order(orderId)).toMatchObject({ status: 'COMMITTED' });
    expect(await app.mysqlStock(productId)).toBe(4);
    expect((await app.reservedRow(orderId)).status).toBe(OutboxStatus.CONSUMED);
    app.clock.advance(60 * MINUTE);
    expect(await app.relay.run()).toEqual(nothing);
  });

  it('waits longer after each failed attempt', async () => {
    app = await startApp({ relay: { pendingGraceMs: 1_000, backoffBaseMs: 10_000, maxAttempts: 10 } });
    const productId = await app.listProduct({ stock: 5 });
    app.publisher.failing = true;
    const orderId = await app.mustBuy('alice', productId);
    await app.drained();

    app.clock.advance(1_001);
    expect(await app.relay.run()).toEqual({ published: 0, failed: 1, dead: 0 });
    expect(await app.reservedRow(orderId)).toMatchObject({
      status: OutboxStatus.FAILED,
      attempts: 1,
      lastError: 'Error: broker not available',
    });

    // first retry 10 s after the failure, not as soon as the grace has passed
    app.clock.advance(9_999);
    expect(await app.relay.run()).toEqual(nothing);
    app.clock.advance(1);
    expect(await app.relay.run()).toEqual({ published: 0, failed: 1, dead: 0 });

    // second retry 20 s after the second failure
    app.clock.advance(19_999);
    expect(await app.relay.run()).toEqual(nothing);
    app.clock.advance(1);
    expect(await app.relay.run()).toEqual({ published: 0, failed: 1, dead: 0 });
    expect((await app.reservedRow(orderId)).attempts).toBe(3);

    app.publisher.failing = false;
    app.clock.advance(40_000);
    expect(await app.relay.run()).toEqual({ published: 1, failed: 0, dead: 0 });
    await app.drained();
    expect(await app.order(orderId)).toMatchObject({ status: 'COMMITTED' });
  });

  it('gives a row up as DEAD after maxAttempts failed attempts, counts it, and sends it no more', async () => {
    app = await startApp({ relay: { pendingGraceMs: 1_000, backoffBaseMs: 1_000, maxAttempts: 3 } });
    const productId = await app.listProduct({ stock: 5 });
    app.publisher.failing = true;
    const orderId = await app.mustBuy('alice', productId);
    await app.drained();

    const reports = [];
    for (let i = 0; i < 3; i += 1) {
      app.clock.advance(MINUTE);
      reports.push(await app.relay.run());
    }

    expect(reports).toEqual([
      { published: 0, failed: 1, dead: 0 },
      { published: 0, failed: 1, dead: 0 },
      { published: 0, failed: 1, dead: 1 },
    ]);
    expect(await app.reservedRow(orderId)).toMatchObject({ status: OutboxStatus.DEAD, attempts: 3 });
    expect(app.metrics.total('outbox_dead', { topic: Topics.ORDERS_RESERVED })).toBe(1);
    expect(app.metrics.gauges.get('outbox_rows{"status":"dead"}')).toBe(1);
    expect(app.metrics.gauges.get('outbox_rows{"status":"pending"}')).toBe(0);

    app.publisher.failing = false;
    const attempts = app.publisher.attempts;
    app.clock.advance(60 * MINUTE);
    expect(await app.relay.run()).toEqual(nothing);
    expect(app.publisher.attempts).toBe(attempts);
  });

  it('counts every send: a row never consumed goes DEAD once it has been sent maxAttempts times', async () => {
    app = await startApp({
      consumers: false,
      relay: { pendingGraceMs: 1_000, staleSentMs: MINUTE, backoffBaseMs: 1_000, maxAttempts: 3 },
    });
    const productId = await app.listProduct({ stock: 5 });
    const orderId = await app.mustBuy('alice', productId);
    await app.drained();
    expect(await app.reservedRow(orderId)).toMatchObject({ status: OutboxStatus.SENT, attempts: 1 });

    const reports = [];
    for (let i = 0; i < 3; i += 1) {
      app.clock.advance(10 * MINUTE);
      reports.push(await app.relay.run());
    }

    expect(reports).toEqual([
      { published: 1, failed: 0, dead: 0 },
      { published: 1, failed: 0, dead: 0 },
      { published: 0, failed: 1, dead: 1 },
    ]);
    expect(await app.reservedRow(orderId)).toMatchObject({ status: OutboxStatus.DEAD });
    expect(app.metrics.total('outbox_dead')).toBe(1);
    const sends = app.publisher.attempts;
    app.clock.advance(60 * MINUTE);
    expect(await app.relay.run()).toEqual(nothing);
    expect(app.publisher.attempts).toBe(sends);
  });
});
