/** A ticket to open one order's event stream without an Authorization header, as the buyer receives it. */
export type StreamTicket = Readonly<{ ticket: string; expiresAt: string }>;

/**
 * Short-lived, single-use tickets bound to a buyer and one of their orders: what a browser's `EventSource`,
 * which cannot send an Authorization header, carries in the stream's URL instead of the bearer token. Shared by
 * every API instance: a ticket issued by one is used by another.
 */
export interface StreamTickets {
  issue(userId: string, orderId: string, ttlMs: number): Promise<StreamTicket>;
  /**
   * Uses the ticket up and answers the buyer it was issued to, when it was issued for this order and is
   * fresh and unused; null otherwise (a ticket asked for another order is used up all the same).
   */
  redeem(ticket: string, orderId: string): Promise<string | null>;
}

/** 128 random bits, URL-safe. */
export const STREAM_TICKET_BYTES = 16;
