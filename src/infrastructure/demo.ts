import type { ManageProducts } from '../application/index.js';
import type { Config } from './config.js';

/** What `npm start` lists on the memory profile, so that a first order can be placed at once. */
export const listDemoProduct = async (products: ManageProducts): Promise<number> => {
  const product = await products.list(
    {
      name: 'Demo flash-sale item',
      stock: 100,
      perUserLimit: 2,
      maxPerOrder: 1,
      saleStartsAt: null,
      saleEndsAt: null,
      // the demo shows the sale path: an order carries a single-use token the buyer asked for first
      requirePathToken: true,
    },
    'demo',
  );
  return product.productId;
};

/** The lines printed under the demo product: how to get a token and buy. */
export const demoBanner = (config: Config, url: string, productId: number): string[] => [
  '',
  `seckill is serving ${url} on the ${config.profile} profile.`,
  `A demo product is listed: id ${productId}, stock 100, at most 2 per buyer, 1 per order, through the sale path.`,
  ...(config.usingDevelopmentSecret
    ? [
        `WARNING: tokens are signed with the fixed development secret (SECKILL_JWT_SECRET unset): listening on ${config.host} only.`,
      ]
    : []),
  `Buy it in a browser: ${url}/sale/${productId}${config.usingDevelopmentSecret ? ' (sign in with any buyer name: a demo sign-in)' : ' (with a buyer token from your identity provider)'}`,
  `Or by hand: get a token, ask for the sale path token (single use, ${config.pathTokenTtlMs / 1000} s), and buy with it:`,
  '  TOKEN=$(npx seckill token --user 7)',
  `  PATH_TOKEN=$(curl -s -X POST ${url}/api/v1/seckill/products/${productId}/path -H "Authorization: Bearer $TOKEN" | sed 's/.*"pathToken":"\\([^"]*\\)".*/\\1/')`,
  `  curl -s -X POST ${url}/api/v1/seckill/orders -H "Authorization: Bearer $TOKEN" -H "Idempotency-Key: $(node -e 'console.log(crypto.randomUUID())')" \\`,
  `       -H 'Content-Type: application/json' -d '{"productId":${productId},"quantity":1,"pathToken":"'$PATH_TOKEN'"}'`,
  `  curl -s ${url}/api/v1/products/${productId}`,
  `  curl -s '${url}/api/v1/orders?productId=${productId}' -H "Authorization: Bearer $TOKEN"   # your orders`,
  '',
];
