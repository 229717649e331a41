import express from 'express';
import type { OrderView } from '../../../application/index.js';
import type { RouteContext } from '../dependencies.js';
import { authenticate, principalOf } from '../middleware/auth.js';
import { parse } from '../middleware/input.js';
import { locals } from '../middleware/tracking.js';
import { OrderIdParam } from '../schemas.js';

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

  router.get('/orders/:orderId', user, async (req, res) => {
    const orderId = parse(OrderIdParam, req.params['orderId'], 'orderId');
    res.json(orderBody(await ctx.queries.order(principalOf(res).userId, orderId)));
  });

  router.post('/orders/:orderId/payment', user, async (req, res) => {
    const orderId = parse(OrderIdParam, req.params['orderId'], 'orderId');
    res.json(
      orderBody(await ctx.payOrder.execute(principalOf(res).userId, orderId, locals(res).correlationId)),
    );
  });

  router.post('/orders/:orderId/cancel', user, async (req, res) => {
    const orderId = parse(OrderIdParam, req.params['orderId'], 'orderId');
    res.json(
      orderBody(await ctx.releaseOrder.cancel(principalOf(res).userId, orderId, locals(res).correlationId)),
    );
  });

  return router;
};
