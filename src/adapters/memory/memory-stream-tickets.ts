import { randomBytes } from 'node:crypto';
import { STREAM_TICKET_BYTES, type StreamTicket, type StreamTickets } from '../../application/index.js';

type Issued = Readonly<{ userId: string; orderId: string; expiresAtMs: number }>;

/** Stream tickets of one process. Expired ones are swept, at most once a second, as new ones are issued. */
export class MemoryStreamTickets implements StreamTickets {
  private readonly issued = new Map<string, Issued>();
  private sweptAtMs = 0;

  constructor(private readonly nowMs: () => number = Date.now) {}

  issue(userId: string, orderId: string, ttlMs: number): Promise<StreamTicket> {
    const now = this.nowMs();
    if (now - this.sweptAtMs >= 1_000) {
      this.sweptAtMs = now;
      for (const [ticket, found] of this.issued) if (found.expiresAtMs <= now) this.issued.delete(ticket);
    }
    const ticket = randomBytes(STREAM_TICKET_BYTES).toString('base64url');
    const expiresAtMs = now + ttlMs;
    this.issued.set(ticket, { userId, orderId, expiresAtMs });
    return Promise.resolve({ ticket, expiresAt: new Date(expiresAtMs).toISOString() });
  }

  redeem(ticket: string, orderId: string): Promise<string | null> {
    const found = this.issued.get(ticket);
    this.issued.delete(ticket);
    const valid = found && found.orderId === orderId && found.expiresAtMs > this.nowMs();
    return Promise.resolve(valid ? found.userId : null);
  }
}
