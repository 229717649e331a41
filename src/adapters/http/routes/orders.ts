import express from 'express';
import type { OrderView } from '../../../application/index.js';
import type { RouteContext } from '../dependencies.js';
import { budget, retryAfterSeconds } from '../middleware/admission.js';
import { authenticate, principalOf } from '../middleware/auth.js';
import { parse } from '../middleware/input.js';
import { locals } from '../middleware/tracking.js';
import { HttpProblem } from '../problem.js';
import { encodeOrderCursor, MyOrdersQuery, OrderIdParam } from '../schemas.js';

const orderBody = (o: OrderView) => ({
  orderId: o.orderId,
  productId: o.productId,
  quantity: o.quantity,
  status: o.status,
  ...(o.reason ? { reason: o.reason } : {}),
});

/** What a stream ticket looks like (128 random bits, base64url). */
const TICKET = /^[A-Za-z0-9_-]{22}$/;

/** A buyer's own orders (`/api/v1/orders/...`): another user's order is answered as not found. */
export const ordersRouter = (ctx: RouteContext): express.Router => {
  const router = express.Router();
  const user = authenticate(ctx.tokens);
  const reads = budget(ctx.budgets.read, 'reads');
  const writes = budget(ctx.budgets.write, 'payments and cancellations');
  /**
   * The stream's caller: the bearer token, or a stream ticket in the URL (a browser's EventSource sends no
   * header), used up here whatever follows.
   */
  const userOrTicket: express.RequestHandler = async (req, res, next) => {
    const ticket = req.query['ticket'];
    if (ticket === undefined || req.get('authorization') !== undefined) return user(req, res, next);
    try {
      const orderId = parse(OrderIdParam, req.params['orderId'], 'orderId');
      const buyer =
        typeof ticket === 'string' && TICKET.test(ticket)
          ? await ctx.watchOrder.redeem(ticket, orderId)
          : null;
      if (buyer === null)
        throw new HttpProblem(
          401,
          'INVALID_TICKET',
          'the stream ticket is unknown, used, expired or for another order: ask POST /api/v1/orders/{orderId}/stream-ticket for a new one',
        );
      locals(res).principal = { userId: buyer, role: 'user' };
      next();
    } catch (error) {
      next(error);
    }
  };

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
  // a ticket for a browser's EventSource: the stream's URL, good once, for a minute
  router.post('/orders/:orderId/stream-ticket', user, reads, async (req, res) => {
    const orderId = parse(OrderIdParam, req.params['orderId'], 'orderId');
    const { userId } = principalOf(res);
    const { ticket, expiresAt } = await ctx.watchOrder.ticket(
      userId,
      await ctx.queries.order(userId, orderId),
    );
    res.status(201).json({
      url: `/api/v1/orders/${encodeURIComponent(orderId)}/events?ticket=${ticket}`,
      expiresAt,
    });
  });

  router.get('/orders/:orderId/events', userOrTicket, reads, async (req, res) => {
    const orderId = parse(OrderIdParam, req.params['orderId'], 'orderId');
    // an unknown order, or another buyer's, is a 404 problem before the stream starts
    const { userId } = principalOf(res);
    const first = await ctx.queries.order(userId, orderId);
    const watch = ctx.watchOrder.watch(userId, first);
    if ('refused' in watch)
      throw new HttpProblem(
        429,
        'RATE_LIMITED',
        watch.refused === 'BUYER'
          ? 'too many order streams open: a buyer follows a few orders at once; close one first'
          : 'this server follows as many orders as it can right now; retry in a moment',
        [],
        { 'Retry-After': retryAfterSeconds(watch.retryAfterMs) },
      );
    req.on('close', watch.close);
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
      for await (const view of watch.changes) send(view);
    } finally {
      watch.close();
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
