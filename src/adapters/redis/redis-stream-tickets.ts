import { randomBytes } from 'node:crypto';
import { STREAM_TICKET_BYTES, type StreamTicket, type StreamTickets } from '../../application/index.js';
import { guarded, type RedisClient } from './redis-connection.js';

/**
 * Stream tickets in Redis, shared by every API instance: one key per ticket holding the buyer and the order,
 * expiring with the ticket, read and deleted at once (GETDEL) by the stream it opens.
 */
export class RedisStreamTickets implements StreamTickets {
  constructor(
    private readonly redis: RedisClient,
    private readonly namespace = '',
  ) {}

  async issue(userId: string, orderId: string, ttlMs: number): Promise<StreamTicket> {
    const ticket = randomBytes(STREAM_TICKET_BYTES).toString('base64url');
    const expiresAtMs = Date.now() + ttlMs;
    await guarded('stream ticket issue', () =>
      this.redis.set(this.keyOf(ticket), JSON.stringify([userId, orderId]), 'PX', ttlMs),
    );
    return { ticket, expiresAt: new Date(expiresAtMs).toISOString() };
  }

  async redeem(ticket: string, orderId: string): Promise<string | null> {
    const found = await guarded('stream ticket redeem', () => this.redis.getdel(this.keyOf(ticket)));
    if (found === null) return null;
    const [userId, issuedFor] = JSON.parse(found) as [string, string];
    return issuedFor === orderId ? userId : null;
  }

  private keyOf(ticket: string): string {
    return `${this.namespace}seckill:stream-ticket:${ticket}`;
  }
}
