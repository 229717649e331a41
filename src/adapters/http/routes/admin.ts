import express from 'express';
import type { RouteContext } from '../dependencies.js';
import { authenticate } from '../middleware/auth.js';
import { jsonBody, parse, requireJson } from '../middleware/input.js';
import { locals } from '../middleware/tracking.js';
import { ListProductBody, ProductIdParam, RestockBody } from '../schemas.js';

/** Admin tokens only (`/api/v1/admin/...`): listing and restocking, reconciliation, the audit, the figures. */
export const adminRouter = (ctx: RouteContext): express.Router => {
  const router = express.Router();
  const admin = authenticate(ctx.tokens, 'admin');

  router.post('/admin/products', admin, requireJson, jsonBody, async (req, res) => {
    const input = parse(ListProductBody, req.body, 'body');
    const product = await ctx.manageProducts.list(input, locals(res).correlationId);
    res.status(201).location(`/api/v1/products/${product.productId}`).json(product);
  });

  router.post('/admin/products/:productId/stock', admin, requireJson, jsonBody, async (req, res) => {
    const productId = parse(ProductIdParam, req.params['productId'], 'productId');
    const { quantity } = parse(RestockBody, req.body, 'body');
    res.json(await ctx.manageProducts.restock(productId, quantity, locals(res).correlationId));
  });

  router.post('/admin/reconciliations', admin, async (_req, res) => {
    res.json(await ctx.reconcile.run());
  });

  router.get('/admin/audit', admin, async (_req, res) => {
    res.json(await ctx.audit.run());
  });

  router.get('/admin/dashboard', admin, async (_req, res) => {
    const figures = await ctx.dashboard.gather();
    res.setHeader('Cache-Control', 'no-store');
    res.json({ ...figures, rates: { ...ctx.rates.perSecond(), instance: ctx.instance } });
  });

  return router;
};
