/**
 * autocannon (v9 ships no type declarations: the part used here, typed locally, loaded as
 * src/client/flood.ts loads it) and one way to drive it: POST JSON orders with a bearer token that
 * rotates per request, for a bounded time or a bounded number of requests.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';

type CannonRequest = {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: CannonRequest) => CannonRequest;
};
type CannonOptions = {
  url: string;
  connections: number;
  duration?: number;
  amount?: number;
  timeout: number;
  requests: CannonRequest[];
};
type CannonHistogram = Readonly<{ average: number; max: number; total: number; p50: number; p99: number }>;
type CannonResult = Readonly<{
  duration: number;
  errors: number;
  timeouts: number;
  latency: CannonHistogram;
  requests: CannonHistogram;
  statusCodeStats: Readonly<Record<string, { count: number }>>;
}>;
type Autocannon = (
  options: CannonOptions,
  done: (error: Error | null, result: CannonResult) => void,
) => { stop(): void };

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export type Load = Readonly<{
  /** origin, e.g. http://127.0.0.1:4000 */
  url: string;
  connections: number;
  /** bearer tokens, one per buyer, rotated per request */
  tokens: readonly string[];
  productId: number;
  /** run for this long… */
  seconds?: number;
  /** …or send exactly this many requests */
  amount?: number;
  /** a fresh Idempotency-Key on every request, as the README tells a buyer's app to send */
  keyed?: boolean;
}>;

export type LoadResult = Readonly<{
  connections: number;
  seconds: number;
  /** answered requests (any status) per second */
  rps: number;
  answered: number;
  /** answers by HTTP status */
  statuses: Readonly<Record<string, number>>;
  errors: number;
  timeouts: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}>;

export const ORDER_PATH = '/api/v1/seckill/orders';

/** Drives `POST /api/v1/seckill/orders` with `{"productId":N,"quantity":1}` and a rotating bearer token. */
export const drive = (load: Load): Promise<LoadResult> => {
  const body = JSON.stringify({ productId: load.productId, quantity: 1 });
  const headers = { 'content-type': 'application/json' };
  // fresh for every run, so that no key of an earlier load answers from its record
  const keys = randomUUID();
  let next = 0;
  const request: CannonRequest = {
    method: 'POST',
    path: ORDER_PATH,
    body,
    headers,
    // the same work per request for every target, so the load generator costs each of them the same
    setupRequest: (req) => {
      const n = next++;
      const authorization = `Bearer ${load.tokens[n % load.tokens.length]}`;
      return {
        ...req,
        headers: load.keyed
          ? { ...headers, authorization, 'idempotency-key': `${keys}-${n}` }
          : { ...headers, authorization },
        body,
      };
    },
  };
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: load.url,
        connections: load.connections,
        ...(load.amount === undefined ? { duration: load.seconds ?? 8 } : { amount: load.amount }),
        timeout: 10,
        requests: [request],
      },
      (error, result) => {
        if (error) return reject(error);
        const statuses: Record<string, number> = {};
        for (const [status, { count }] of Object.entries(result.statusCodeStats)) statuses[status] = count;
        resolve({
          connections: load.connections,
          seconds: result.duration,
          rps: Math.round(result.requests.total / result.duration),
          answered: result.requests.total,
          statuses,
          errors: result.errors,
          timeouts: result.timeouts,
          p50Ms: result.latency.p50,
          p99Ms: result.latency.p99,
          maxMs: result.latency.max,
        });
      },
    );
  });
};

/** Answers with one status per second over the run (e.g. 202: durable reservations per second). */
export const perSecond = (result: LoadResult, status: number): number =>
  Math.round((result.statuses[String(status)] ?? 0) / result.seconds);
