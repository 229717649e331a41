import express from 'express';
import type { RouteContext } from '../dependencies.js';
import { addressBudget, budget } from '../middleware/admission.js';
import { authenticate, principalOf } from '../middleware/auth.js';
import { parse } from '../middleware/input.js';
import { HttpProblem } from '../problem.js';
import { ProductIdParam } from '../schemas.js';

const SALE_PATH_ROUTE = '/seckill/products/:productId/path';

/**
 * What anybody may read about a product (`/api/v1/products/...`): the gate's stock left and the sale window;
 * and a buyer's sale path token for it, once the sale is open.
 */
export const productsRouter = (ctx: RouteContext): express.Router => {
  const router = express.Router();

  router.get('/products/:productId', budget(ctx.budgets.read, 'reads'), async (req, res) => {
    const productId = parse(ProductIdParam, req.params['productId'], 'productId');
    res.json(await ctx.queries.product(productId));
  });

  // a bot needs a token per order: the address's path requests have a budget of the order route's size
  router.post(
    SALE_PATH_ROUTE,
    authenticate(ctx.tokens),
    addressBudget(ctx.budgets.pathAddress, 'sale path requests'),
    budget(ctx.budgets.write, 'sale path requests'),
    async (req, res) => {
      const productId = parse(ProductIdParam, req.params['productId'], 'productId');
      const result = await ctx.salePath.execute(principalOf(res).userId, productId);
      if (!result.ok)
        throw new HttpProblem(result.code === 'PRODUCT_NOT_FOUND' ? 404 : 409, result.code, result.detail);
      res.set('Cache-Control', 'no-store').json(result.grant);
    },
  );

  return router;
};
