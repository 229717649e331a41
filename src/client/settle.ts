import { watchUntilDecided } from './order-events.js';
import { call, explain, field, sleep } from './service-calls.js';
import type { Accepted, Buyer, Decided, SimulationOptions, SimulationReport } from './simulation.types.js';

/** Runs `work` over `items` with at most `concurrency` in flight. */
const eachLimited = async <T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>) => {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, lane));
};

type Settled = Readonly<{ decided: Decided[]; undecided: number; seconds: number }>;

/**
 * Waits for every accepted order (with its buyer's token) to be decided: each is watched on its event stream;
 * one whose stream gives out is polled until it is no longer RESERVED or the deadline passes.
 */
export const settle = async (
  base: string,
  accepted: readonly Accepted[],
  buyers: readonly Buyer[],
  options: SimulationOptions,
): Promise<Settled> => {
  const started = Date.now();
  const deadline = started + (options.settleTimeoutMs ?? 60_000);
  const decided: Decided[] = [];
  const watchedOut: Accepted[] = [];
  await eachLimited(accepted, options.watchConcurrency ?? 256, async (order) => {
    const token = (buyers[order.buyer] as Buyer).token;
    const view = await watchUntilDecided(base, order.orderId, token, deadline);
    if (view) decided.push(toDecided(order, view));
    else watchedOut.push(order);
  });
  let pending = watchedOut;
  while (pending.length > 0) {
    const stillPending: Accepted[] = [];
    await eachLimited(pending, options.pollConcurrency ?? 16, async (order) => {
      const view = await readOrder(base, order, buyers).catch(() => null);
      if (view && view.status !== 'RESERVED') decided.push(view);
      else stillPending.push(order);
    });
    pending = stillPending;
    if (pending.length === 0 || Date.now() >= deadline) break;
    await sleep(200);
  }
  return { decided, undecided: pending.length, seconds: (Date.now() - started) / 1000 };
};

const readOrder = async (
  base: string,
  order: Accepted,
  buyers: readonly Buyer[],
): Promise<Decided | null> => {
  const token = (buyers[order.buyer] as Buyer).token;
  const answer = await call(base, `/api/v1/orders/${encodeURIComponent(order.orderId)}`, { token });
  if (answer.status !== 200 || typeof field(answer.body, 'status') !== 'string') return null;
  return toDecided(order, answer.body);
};

/** An order as the service shows it (a GET, or an event's data), for the report. */
const toDecided = (order: Accepted, body: unknown): Decided => {
  const status = field(body, 'status');
  const quantity = field(body, 'quantity');
  const reason = field(body, 'reason');
  return {
    buyer: order.buyer,
    quantity: typeof quantity === 'number' ? quantity : 1,
    status: typeof status === 'string' ? status : 'UNKNOWN',
    ...(typeof reason === 'string' ? { reason } : {}),
  };
};

type AuditSummary = SimulationReport['audit'];

/**
 * The audit replays the whole event store. A gate restore may still be in flight just after the last order
 * is decided, so a failing audit is asked again for a few seconds; an oversell in history never goes away.
 */
export const auditOf = async (base: string, adminToken: string): Promise<AuditSummary> => {
  const until = Date.now() + 5_000;
  for (;;) {
    const answer = await call(base, '/api/v1/admin/audit', { token: adminToken });
    const ok = field(answer.body, 'ok');
    const violations = field(answer.body, 'violations');
    if (answer.status !== 200 || typeof ok !== 'boolean' || !Array.isArray(violations))
      throw explain('the audit endpoint', answer);
    if (ok || Date.now() >= until) {
      const details = (violations as unknown[]).slice(0, 20).map((v) => ({
        kind: String(field(v, 'kind')),
        detail: String(field(v, 'detail')),
      }));
      return { ok, violations: violations.length, details };
    }
    await sleep(500);
  }
};

export const stockLeftOf = async (base: string, productId: number): Promise<number | null> => {
  const answer = await call(base, `/api/v1/products/${productId}`);
  const stockLeft = field(answer.body, 'stockLeft');
  return answer.status === 200 && typeof stockLeft === 'number' ? stockLeft : null;
};
