import { randomBytes } from 'node:crypto';
import {
  PATH_TOKEN_BYTES,
  type SalePathGrant,
  type SalePathRedemption,
  type SalePaths,
} from '../../application/index.js';
import { guarded, type RedisClient } from './redis-connection.js';

/**
 * KEYS: the token's key. ARGV: userId. Used once, by its owner: another buyer's try leaves it for the owner.
 * Answers 1 redeemed, 0 unknown (never issued, used, or expired), -1 another buyer's.
 */
const REDEEM = `
local owner = redis.call('GET', KEYS[1])
if not owner then return 0 end
if owner ~= ARGV[1] then return -1 end
redis.call('DEL', KEYS[1])
return 1
`;

type PathCommands = { seckillRedeemPath(key: string, userId: string): Promise<number> };

const REDEMPTIONS: Readonly<Record<number, SalePathRedemption>> = {
  1: 'REDEEMED',
  0: 'UNKNOWN',
  [-1]: 'NOT_YOURS',
};

/**
 * Sale path tokens in Redis, shared by every API instance: one key per token, under the product's hash tag
 * (a token for another product is not found), holding the buyer's id and expiring with the token.
 */
export class RedisSalePaths implements SalePaths {
  private readonly redis: RedisClient & PathCommands;

  constructor(
    client: RedisClient,
    private readonly namespace = '',
  ) {
    const c = client as RedisClient & Partial<PathCommands>;
    if (typeof c.seckillRedeemPath !== 'function')
      client.defineCommand('seckillRedeemPath', { numberOfKeys: 1, lua: REDEEM });
    this.redis = client as RedisClient & PathCommands;
  }

  async issue(userId: string, productId: number, ttlMs: number): Promise<SalePathGrant> {
    const pathToken = randomBytes(PATH_TOKEN_BYTES).toString('base64url');
    const expiresAtMs = Date.now() + ttlMs;
    await guarded('path token issue', () =>
      this.redis.set(this.key(productId, pathToken), userId, 'PX', ttlMs),
    );
    return { pathToken, expiresAt: new Date(expiresAtMs).toISOString() };
  }

  async redeem(pathToken: string, userId: string, productId: number): Promise<SalePathRedemption> {
    const answer = await guarded('path token redeem', () =>
      this.redis.seckillRedeemPath(this.key(productId, pathToken), userId),
    );
    return REDEMPTIONS[answer] ?? 'UNKNOWN';
  }

  private key(productId: number, pathToken: string): string {
    return `${this.namespace}seckill:{p${productId}}:path:${pathToken}`;
  }
}
