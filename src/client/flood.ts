import { createRequire } from 'node:module';
import { field, parseJson } from './service-calls.js';
import { type Accepted, type Buyer, bump, type SimulationOptions } from './simulation.types.js';

// ---- autocannon (v9 ships no type declarations: the part used here, typed locally) ----

type Job = Readonly<{ buyer: number }>;
type FloodContext = { job?: Job };
type CannonRequest = {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: CannonRequest, context: FloodContext) => CannonRequest | null;
  onResponse?: (
    status: number,
    body: string,
    context: FloodContext,
    headers: Record<string, unknown>,
  ) => void;
};
type CannonOptions = {
  url: string;
  connections: number;
  amount: number;
  timeout: number;
  sampleInt: number;
  requests: CannonRequest[];
};
type CannonHistogram = Readonly<{ average: number; max: number; total: number; p50: number; p99: number }>;
export type CannonResult = Readonly<{
  duration: number;
  errors: number;
  timeouts: number;
  latency: CannonHistogram;
  requests: CannonHistogram & Readonly<{ sent: number }>;
}>;
type CannonInstance = { stop(): void };
type Autocannon = (
  options: CannonOptions,
  done: (error: Error | null, result: CannonResult) => void,
) => CannonInstance;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

// ---- the flood ----

const KNOWN_CODES = new Set([
  'SOLD_OUT',
  'LIMIT_EXCEEDED',
  'SALE_NOT_ACTIVE',
  'DUPLICATE_REQUEST',
  'RATE_LIMITED',
  'UNAVAILABLE',
  'PATH_TOKEN_REQUIRED',
  'PATH_TOKEN_INVALID',
]);

const codeOf = (status: number, body: unknown): string => {
  if (status === 202) return 'ACCEPTED';
  const code = field(body, 'code');
  if (typeof code === 'string' && KNOWN_CODES.has(code)) return code;
  return `HTTP ${status}${typeof code === 'string' ? ` ${code}` : ''}`;
};

const shuffle = <T>(items: T[]): T[] => {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
};

export type Flood = Readonly<{
  result: CannonResult;
  answers: Record<string, number>;
  accepted: Accepted[];
  answered: number;
}>;

/**
 * With the sale path on, each click first asks for the buyer's path token (as the sale opens, before the
 * flood), `connections` at a time; a refused request leaves no token, and its order is answered for that.
 */
const pathTokens = async (
  target: Readonly<{ url: string; pathPrefix: string; productId: number }>,
  buyers: readonly Buyer[],
  jobs: readonly Job[],
  connections: number,
): Promise<Array<string | undefined>> => {
  const tokens = new Array<string | undefined>(jobs.length);
  const url = `${target.url}${target.pathPrefix}/api/v1/seckill/products/${target.productId}/path`;
  let next = 0;
  const lane = async () => {
    while (next < jobs.length) {
      const at = next++;
      const buyer = buyers[(jobs[at] as Job).buyer] as Buyer;
      const answer = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${buyer.token}` },
      });
      const token = field(parseJson(await answer.text()), 'pathToken');
      tokens[at] = typeof token === 'string' ? token : undefined;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(connections, jobs.length)) }, lane));
  return tokens;
};

/**
 * Every buyer clicks `options.clicks` times, in a random order, on `options.connections` connections. With
 * `pathToken`, each click carries a sale path token of its own.
 */
export const flood = async (
  target: Readonly<{ url: string; pathPrefix: string; productId: number; pathToken: boolean }>,
  buyers: readonly Buyer[],
  options: SimulationOptions,
): Promise<Flood> => {
  const jobs = shuffle(
    buyers.flatMap((_, buyer) => Array.from({ length: options.clicks }, () => ({ buyer }))),
  );
  const plainBody = JSON.stringify({ productId: target.productId, quantity: 1 });
  const tokens = target.pathToken ? await pathTokens(target, buyers, jobs, options.connections) : null;
  const answers: Record<string, number> = {};
  const accepted: Accepted[] = [];
  let cursor = 0;
  let answered = 0;

  const request: CannonRequest = {
    method: 'POST',
    path: `${target.pathPrefix}/api/v1/seckill/orders`,
    // one call per request sent: autocannon sends exactly `amount` requests, so the cursor never runs past the jobs
    setupRequest: (req, context) => {
      const at = cursor++ % jobs.length;
      const job = jobs[at] as Job;
      context.job = job;
      const token = (buyers[job.buyer] as Buyer).token;
      return {
        ...req,
        headers: { ...req.headers, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: tokens
          ? JSON.stringify({ productId: target.productId, quantity: 1, pathToken: tokens[at] })
          : plainBody,
      };
    },
    // one connection has one request in flight (no pipelining), so the context still holds its job
    onResponse: (status, text, context) => {
      answered++;
      const parsed = parseJson(text);
      const code = codeOf(status, parsed);
      bump(answers, code);
      const orderId = field(parsed, 'orderId');
      if (code === 'ACCEPTED' && typeof orderId === 'string' && context.job)
        accepted.push({ orderId, buyer: context.job.buyer });
    },
  };

  const timeoutMs = options.floodTimeoutMs ?? 120_000;
  let instance: CannonInstance | undefined;
  let timer: NodeJS.Timeout | undefined;
  const run = new Promise<CannonResult>((resolve, reject) => {
    instance = autocannon(
      {
        url: target.url,
        connections: Math.max(1, Math.min(options.connections, jobs.length)),
        amount: jobs.length,
        timeout: 10,
        sampleInt: 100,
        requests: [request],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // ask autocannon to stop and give back what it has; give up on it if even that does not come
      instance?.stop();
      timer = setTimeout(() => reject(new Error(`the flood did not stop within ${timeoutMs} ms`)), 5_000);
    }, timeoutMs);
  });
  try {
    const result = await Promise.race([run, deadline]);
    return { result, answers, accepted, answered };
  } finally {
    clearTimeout(timer);
  }
};
