import { afterEach, describe, expect, it } from '@jest/globals';
import { InfrastructureUnavailable, type PlaceOrderResult } from '../../../src/application/index.js';
import { orderStreamId } from '../../../src/domain/index.js';
import { type AppHarness, startApp, type HarnessOptions } from '../../support/app-harness.js';

describe('PlaceOrder with an Idempotency-Key', () => {
  let app: AppHarness;
  const start = async (options: HarnessOptions = {}) => {
    app = await startApp(options);
    return app;
  };
  afterEach(() => app.close());

  const order = (
    userId: string,
    productId: number,
    key: string,
    extra: { quantity?: number; pathToken?: string } = {},
  ): Promise<PlaceOrderResult> =>
    app.placeOrder.execute({
      userId,
      productId,
      quantity: extra.quantity ?? 1,
      correlationId: `corr-${userId}`,
      idempotencyKey: key,
      pathToken: extra.pathToken,
    });

  it('answers a repeat with the first order, takes one unit, and writes nothing more', async () => {
    const { listProduct, gate, writes } = await start({ consumers: false });
    const productId = await listProduct({ stock: 5, perUserLimit: 2 });

    const first = await order('alice', productId, 'k-1');
    const after = writes();
    const again = await order('alice', productId, 'k-1');

    expect(first).toEqual({ ok: true, orderId: 'order-0001', status: 'RESERVED' });
    expect(again).toEqual({ ok: true, orderId: 'order-0001', status: 'RESERVED', replayed: true });
    expect(await gate.stockLeft(productId)).toBe(4);
    expect(writes()).toEqual(after);
  });

  it("answers a repeat with the order's status now, once MySQL has decided it", async () => {
    const { listProduct, drained } = await start();
    const productId = await listProduct({ stock: 5 });
    const first = await order('alice', productId, 'k-1');
    await drained();

    expect(await order('alice', productId, 'k-1')).toEqual({
      ok: true,
      orderId: first.ok ? first.orderId : '',
      status: 'COMMITTED',
      replayed: true,
    });
  });

  it('answers 50 requests sent at once with one key with one order', async () => {
    const { listProduct, gate, db } = await start({ consumers: false });
    const productId = await listProduct({ stock: 5, perUserLimit: 2 });

    const answers = await Promise.all(Array.from({ length: 50 }, () => order('alice', productId, 'burst')));

    expect(new Set(answers.map((a) => (a.ok ? a.orderId : a.code)))).toEqual(new Set(['order-0001']));
    expect(await gate.stockLeft(productId)).toBe(4);
    expect(db.orders.size).toBe(1);
  });

  it('gives the same refusal again, even once stock is back', async () => {
    const { listProduct, products } = await start({ consumers: false });
    const productId = await listProduct({ stock: 1, perUserLimit: 2 });
    await order('bob', productId, 'bob-1');

    const first = await order('alice', productId, 'k-1');
    await products.restock(productId, 5, 'restock');
    const again = await order('alice', productId, 'k-1');

    expect(first).toMatchObject({ ok: false, code: 'SOLD_OUT' });
    expect(again).toMatchObject({ ok: false, code: 'SOLD_OUT', replayed: true });
    // a new key is a new request
    expect(await order('alice', productId, 'k-2')).toMatchObject({ ok: true });
  });

  it('refuses the key with another quantity (422); on another product it is a request of its own', async () => {
    const { listProduct, gate, writes } = await start({ consumers: false });
    const productId = await listProduct({ stock: 5, perUserLimit: 3, maxPerOrder: 3 });
    const other = await listProduct({ stock: 5 });
    await order('alice', productId, 'k-1');
    const before = writes();

    expect(await order('alice', productId, 'k-1', { quantity: 2 })).toMatchObject({
      ok: false,
      code: 'IDEMPOTENCY_KEY_REUSED',
    });
    expect(writes()).toEqual(before);
    expect(await order('alice', other, 'k-1')).toMatchObject({ ok: true, status: 'RESERVED' });
    expect([await gate.stockLeft(productId), await gate.stockLeft(other)]).toEqual([4, 4]);
  });

  it("scopes a key to its buyer: another buyer's same key is a request of their own", async () => {
    const { listProduct } = await start({ consumers: false });
    const productId = await listProduct({ stock: 5 });

    const alice = await order('alice', productId, 'shared');
    const bob = await order('bob', productId, 'shared');

    expect(alice).toMatchObject({ ok: true, orderId: 'order-0001' });
    expect(bob).toMatchObject({ ok: true, orderId: 'order-0002' });
  });

  it('records the order when the first try took the unit but died before MySQL', async () => {
    const { listProduct, gate, memoryGate, streamEvents } = await start({ consumers: false });
    const productId = await listProduct({ stock: 5 });
    // the first try: the gate took the unit and recorded the key, then the process died
    await memoryGate.reserve({
      productId,
      orderId: 'lost-order',
      userId: 'alice',
      quantity: 1,
      perUserLimit: 1,
      idempotency: { key: 'k-1', ttlMs: 60_000 },
    });

    const again = await order('alice', productId, 'k-1');

    expect(again).toEqual({ ok: true, orderId: 'lost-order', status: 'RESERVED', replayed: true });
    expect(await streamEvents(orderStreamId('lost-order'))).toMatchObject([{ type: 'OrderReserved' }]);
    expect(await gate.stockLeft(productId)).toBe(4);
  });

  it('forgets the key when the reservation could not be recorded: the retry is asked afresh', async () => {
    const { listProduct, gate, unitOfWork } = await start({ consumers: false });
    const productId = await listProduct({ stock: 5 });
    unitOfWork.failNext();

    await expect(order('alice', productId, 'k-1')).rejects.toBeInstanceOf(InfrastructureUnavailable);
    expect(await gate.stockLeft(productId)).toBe(5);

    expect(await order('alice', productId, 'k-1')).toEqual({
      ok: true,
      orderId: 'order-0002',
      status: 'RESERVED',
    });
    expect(await gate.stockLeft(productId)).toBe(4);
  });

  it('turns the keyed flood away in process once sold out, and asks the gate only for a buyer who reserved', async () => {
    const { listProduct, gate } = await start({ consumers: false });
    const productId = await listProduct({ stock: 2 });
    const first = await order('alice', productId, 'k-1');
    await order('bob', productId, 'b-1');
    expect(await order('carol', productId, 'c-1')).toMatchObject({ ok: false, code: 'SOLD_OUT' });
    // who reserved is read once, as the product is marked sold out
    expect(gate.reservedByCalls).toBe(1);
    const calls = gate.reserveCalls;

    for (let i = 0; i < 20; i += 1)
      expect(await order(`flood-${i}`, productId, `f-${i}`)).toMatchObject({ ok: false, code: 'SOLD_OUT' });
    expect(await order('carol', productId, 'c-1')).toMatchObject({ ok: false, code: 'SOLD_OUT' });
    expect(gate.reserveCalls).toBe(calls);

    // alice may be repeating a 202 that never arrived
    expect(await order('alice', productId, 'k-1')).toMatchObject({
      ok: true,
      orderId: first.ok ? first.orderId : '',
      replayed: true,
    });
    expect(gate.reserveCalls).toBe(calls + 1);
  });

  it('answers a repeat of a reserved order although the product is marked sold out in process', async () => {
    const { listProduct, soldOut } = await start({ consumers: false });
    const productId = await listProduct({ stock: 1 });
    const first = await order('alice', productId, 'k-1');
    expect(await order('bob', productId, 'b-1')).toMatchObject({ ok: false, code: 'SOLD_OUT' });
    expect(soldOut.isSoldOut(productId)).toBe(true);

    expect(await order('alice', productId, 'k-1')).toMatchObject({
      ok: true,
      orderId: first.ok ? first.orderId : '',
      replayed: true,
    });
    expect(await order('carol', productId, 'c-1')).toMatchObject({ ok: false, code: 'SOLD_OUT' });
  });

  it('answers a repeat from its key although its path token was used up by the first try', async () => {
    const { listProduct, salePath } = await start({ consumers: false });
    const productId = await listProduct({ stock: 5, requirePathToken: true });
    const issued = await salePath.execute('alice', productId);
    const pathToken = issued.ok ? issued.grant.pathToken : '';

    const first = await order('alice', productId, 'k-1', { pathToken });
    const again = await order('alice', productId, 'k-1', { pathToken });

    expect(again).toMatchObject({ ok: true, orderId: first.ok ? first.orderId : '', replayed: true });
    // without an earlier answer, a spent token is still refused
    expect(await order('alice', productId, 'k-2', { pathToken })).toMatchObject({
      ok: false,
      code: 'PATH_TOKEN_INVALID',
    });
  });

  it('answers a repeat from its key after the sale window has closed; a new request is refused', async () => {
    const { listProduct, clock, gate } = await start({ consumers: false });
    const closes = new Date(Date.parse(clock.now()) + 60_000).toISOString();
    const productId = await listProduct({ stock: 5, perUserLimit: 2, saleEndsAt: closes });
    const first = await order('alice', productId, 'k-1');

    clock.advance(120_000);

    expect(await order('alice', productId, 'k-1')).toMatchObject({
      ok: true,
      orderId: first.ok ? first.orderId : '',
      replayed: true,
    });
    expect(await order('alice', productId, 'k-2')).toMatchObject({ ok: false, code: 'SALE_NOT_ACTIVE' });
    expect(await gate.stockLeft(productId)).toBe(4);
  });

  it('forgets a key once its time to live has passed', async () => {
    const { listProduct, clock } = await start({ consumers: false });
    const productId = await listProduct({ stock: 5, perUserLimit: 2 });
    await order('alice', productId, 'k-1');

    clock.advance(25 * 3600_000);

    expect(await order('alice', productId, 'k-1')).toEqual({
      ok: true,
      orderId: 'order-0002',
      status: 'RESERVED',
    });
  });
});
