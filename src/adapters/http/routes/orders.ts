import express from 'express';
import type { OrderView } from '../../../application/index.js';
import type { RouteContext } from '../dependencies.js';
import { budget } from '../middleware/admission.js';
import { authenticate, principalOf } from '../middleware/auth.js';
import { parse } from '../middleware/input.js';
import { locals } from '../middleware/tracking.js';
import { encodeOrderCursor, MyOrdersQuery, OrderIdParam } from '../schemas.js';

const orderBody = (o: OrderView) => ({
  orderId: o.orderId,
  productId: o.productId,
  quantity: o.quantity,
  status: o.status,
  ...(o.reason ? { reason: o.reason } : {}),
});

/** A buyer's own orders (`/api/v1/orders/...`): another user's order is answered as not found. */
export const ordersRouter = (ctx: RouteContext): express.Router => {
  const router = express.Router();
  const user = authenticate(ctx.tokens);
  const reads = budget(ctx.budgets.read, 'reads');
  const writes = budget(ctx.budgets.write, 'payments and cancellations');

  // "my orders": how a buyer finds an order whose 202 never arrived
  router.get('/orders', user, reads, async (req, res) => {
    const query = parse(MyOrdersQuery, req.query, 'query');
    const page = await ctx.queries.myOrders(principalOf(res).userId, {
      productId: query.productId,
      after: query.cursor,
      limit: query.limit,
    });
    res.json({
      orders: page.orders.map((o) => ({ ...orderBody(o), reservedAt: o.reservedAt, updatedAt: o.updatedAt })),
      next: page.next ? encodeOrderCursor(page.next) : null,
    });
  });

  router.get('/orders/:orderId', user, reads, async (req, res) => {
    const orderId = parse(OrderIdParam, req.params['orderId'], 'orderId');
    res.json(orderBody(await ctx.queries.order(principalOf(res).userId, orderId)));
  });

  // Server-sent events: the order as it stands, then each status change, until it is paid or released.
  router.get('/orders/:orderId/events', user, reads, async (req, res) => {
    const orderId = parse(OrderIdParam, req.params['orderId'], 'orderId');
    // an unknown order, or another buyer's, is a 404 problem before the stream starts
    const first = await ctx.queries.order(principalOf(res).userId, orderId);
    let left = false;
    req.on('close', () => (left = true));
    res.status(200).set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    const send = (view: OrderView) =>
      res.write(`event: status\nid: ${view.status}\ndata: ${JSON.stringify(orderBody(view))}\n\n`);
    // a comment now and then keeps proxies from closing a quiet stream
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    try {
      send(first);
      for await (const view of ctx.watchOrder.changes(first, () => left)) send(view);
    } finally {
      clearInterval(keepAlive);
      res.end();
    }
  });

  router.post('/orders/:orderId/payment', user, writes, async (req, res) => {
    const orderId = parse(OrderIdParam, req.params['orderId'], 'orderId');
    res.json(
      orderBody(await ctx.payOrder.execute(principalOf(res).userId, orderId, locals(res).correlationId)),
    );
  });

  router.post('/orders/:orderId/cancel', user, writes, async (req, res) => {
    const orderId = parse(OrderIdParam, req.params['orderId'], 'orderId');
    res.json(
      orderBody(await ctx.releaseOrder.cancel(principalOf(res).userId, orderId, locals(res).correlationId)),
    );
  });

  return router;
};
