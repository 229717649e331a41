import express from 'express';
import type { RouteContext } from '../dependencies.js';
import { parse } from '../middleware/input.js';
import { ProductIdParam } from '../schemas.js';

/** What anybody may read about a product (`/api/v1/products/...`): the gate's stock left and the sale window. */
export const productsRouter = (ctx: RouteContext): express.Router => {
  const router = express.Router();

  router.get('/products/:productId', async (req, res) => {
    const productId = parse(ProductIdParam, req.params['productId'], 'productId');
    res.json(await ctx.queries.product(productId));
  });

  return router;
};
