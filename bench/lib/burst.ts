/**
 * The pay/cancel burst: committed orders paid or cancelled with many requests at once, as buyers do when a
 * sale's payment page opens. Each request is timed on its own (fetch), so the figures are the buyers' own.
 */
import { call } from './service.js';

export type BurstResult = Readonly<{
  requests: number;
  concurrency: number;
  seconds: number;
  perSec: number;
  /** answers by HTTP status ("error" for a request that got none) */
  statuses: Readonly<Record<string, number>>;
  fiveXx: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}>;

export type BurstOrder = Readonly<{ orderId: string; token: string }>;

const percentile = (sorted: readonly number[], p: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** Places one order per buyer (at most `concurrency` at once) and answers the accepted ones. */
export const placeOrders = async (
  base: string,
  productId: number,
  tokens: readonly string[],
  concurrency: number,
): Promise<BurstOrder[]> => {
  const orders: BurstOrder[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < tokens.length) {
        const token = tokens[next++]!;
        const answer = await call(`${base}/api/v1/seckill/orders`, token, { productId, quantity: 1 });
        const orderId = (answer.body as { orderId?: unknown } | null)?.orderId;
        if (answer.status !== 202 || typeof orderId !== 'string')
          throw new Error(`burst order answered ${answer.status}: ${JSON.stringify(answer.body)}`);
        orders.push({ orderId, token });
      }
    }),
  );
  return orders;
};

/** Pays every other order and cancels the rest, `concurrency` requests in flight at a time. */
export const payOrCancel = async (
  base: string,
  orders: readonly BurstOrder[],
  concurrency: number,
): Promise<BurstResult> => {
  const statuses: Record<string, number> = {};
  const took: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < orders.length) {
        const i = next++;
        const { orderId, token } = orders[i]!;
        const action = i % 2 === 0 ? 'payment' : 'cancel';
        const sent = performance.now();
        let status: string;
        try {
          status = String((await call(`${base}/api/v1/orders/${orderId}/${action}`, token, {})).status);
        } catch {
          status = 'error';
        }
        took.push(performance.now() - sent);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  took.sort((a, b) => a - b);
  return {
    requests: orders.length,
    concurrency,
    seconds: Math.round(seconds * 100) / 100,
    perSec: Math.round(orders.length / seconds),
    statuses,
    fiveXx: Object.entries(statuses)
      .filter(([s]) => s === 'error' || Number(s) >= 500)
      .reduce((n, [, c]) => n + c, 0),
    p50Ms: Math.round(percentile(took, 50)),
    p99Ms: Math.round(percentile(took, 99)),
    maxMs: Math.round(took.at(-1) ?? 0),
  };
};
