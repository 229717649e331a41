import { randomBytes } from 'node:crypto';
import { PATH_TOKEN_BYTES, type SalePathGrant, type SalePaths } from '../../application/index.js';
import { guarded, type RedisClient } from './redis-connection.js';

/** A token's key, in its product's hash tag: the gate's order script uses it up in the same step as the stock. */
export const pathTokenKey = (namespace: string, productId: number, pathToken: string): string =>
  `${namespace}seckill:{p${productId}}:path:${pathToken}`;

/**
 * Sale path tokens in Redis, shared by every API instance: one key per token, under the product's hash tag
 * (a token for another product is not found), holding the buyer's id and expiring with the token. The gate's
 * order script uses a token up (`RedisStockGate`).
 */
export class RedisSalePaths implements SalePaths {
  constructor(
    private readonly redis: RedisClient,
    private readonly namespace = '',
  ) {}

  async issue(userId: string, productId: number, ttlMs: number): Promise<SalePathGrant> {
    const pathToken = randomBytes(PATH_TOKEN_BYTES).toString('base64url');
    const expiresAtMs = Date.now() + ttlMs;
    await guarded('path token issue', () =>
      this.redis.set(pathTokenKey(this.namespace, productId, pathToken), userId, 'PX', ttlMs),
    );
    return { pathToken, expiresAt: new Date(expiresAtMs).toISOString() };
  }
}
